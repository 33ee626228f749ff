"""Leaf inputs are built as Strawberry's own walk builds them (the oracle:
the same conversion with the type's ``from_input`` hook removed)."""

from __future__ import annotations

import enum
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import strawberry
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strawberry.types.arguments import InputContext, convert_arguments
from strawberry.types.base import get_object_definition

from api.graphql.schema import schema
from resolvers.leaf_inputs import leaf_input
from resolvers.verification.inputs import ScanInput
from resolvers.verification.mutations import VerificationMutations

_SCAN_FIELDS = ("country", "city", "deviceFingerprint", "userAgent")


@contextmanager
def _strawberry_walk(cls: type) -> Iterator[None]:
    definition = get_object_definition(cls, strict=True)
    hook, definition.from_input = definition.from_input, None
    try:
        yield
    finally:
        definition.from_input = hook


def _verify_arguments() -> list[Any]:
    definition = get_object_definition(VerificationMutations, strict=True)
    (field,) = [f for f in definition.fields if f.python_name == "verify_product"]
    return field.arguments


def _convert(value: dict[str, Any]) -> dict[str, Any]:
    return convert_arguments(
        value,
        _verify_arguments(),
        schema.schema_converter.scalar_registry,
        schema.config,
        None,
    )


def _as_fields(arguments: dict[str, Any]) -> dict[str, Any]:
    scan = arguments.get("scan")
    return {**arguments, "scan": vars(scan) if scan is not None else scan}


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    scan=st.none()
    | st.dictionaries(st.sampled_from(_SCAN_FIELDS), st.none() | st.text(max_size=8)),
    with_scan=st.booleans(),
)
def test_scan_input_is_what_strawberry_builds(scan: dict[str, Any] | None, with_scan: bool) -> None:
    value: dict[str, Any] = {"code": "ABCD-EFGH-JKMN"}
    if with_scan:
        value["scan"] = scan
    ours = _convert(value)
    with _strawberry_walk(ScanInput):
        theirs = _convert(value)
    assert type(ours.get("scan")) is type(theirs.get("scan"))
    assert _as_fields(ours) == _as_fields(theirs)


def test_the_hook_is_used() -> None:
    """Positive control: the type has the hook and conversion goes through it."""
    definition = get_object_definition(ScanInput, strict=True)
    assert definition.from_input is not None
    calls = []
    hook = definition.from_input

    def counting(cls: type, value: Any, context: Any) -> Any:
        calls.append(value)
        return hook(cls, value, context)

    definition.from_input = counting
    try:
        converted = _convert({"code": "X", "scan": {"country": "FR"}})
    finally:
        definition.from_input = hook
    assert calls == [{"country": "FR"}]
    assert converted["scan"] == ScanInput(country="FR")


def test_required_fields_are_filled_like_strawberry() -> None:
    @leaf_input
    @strawberry.input
    class Pair:
        left: int
        right: str | None = None

    context = InputContext(None, schema.config, schema.schema_converter.scalar_registry, ())
    builder = get_object_definition(Pair, strict=True).from_input
    assert builder is not None
    assert builder(Pair, {"left": 3}, context) == Pair(left=3)
    assert builder(Pair, {"left": 3, "right": "r"}, context) == Pair(left=3, right="r")


def test_inputs_with_non_leaf_fields_are_refused_at_import() -> None:
    @strawberry.enum
    class Colour(enum.Enum):
        RED = "RED"

    @strawberry.input
    class Nested:
        inner: ScanInput | None = None

    @strawberry.input
    class WithEnum:
        colour: Colour | None = None

    @strawberry.input
    class WithId:
        ident: strawberry.ID | None = None

    for cls in (Nested, WithEnum, WithId):
        with pytest.raises(TypeError, match="not a scalar leaf field"):
            leaf_input(cls)
