"""A plan calls a resolver whose arguments include a leaf input
(``resolvers/leaf_inputs.py``) directly, building the input itself: the
resolver gets what Strawberry's own conversion gives it on graphql-core
(the oracle runs with the type's ``from_input`` hook removed, so Strawberry
walks the type itself), for inputs with fields omitted, null or set, sent
as variables, as literals, or as literals holding variables."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import strawberry
from _operation_context import Context
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strawberry.types.base import get_object_definition
from strawberry.types.info import Info

from api.graphql.execution import PlanCache, compiled_executor
from resolvers.leaf_inputs import LeafBuilder, leaf_input
from resolvers.verification.inputs import ScanInput

seen: list[Any] = []


@leaf_input
@strawberry.input
class Pair:
    left: int
    right: str | None = None
    ratio: float | None = 1.5
    flag: bool | None = None


def _fields(value: Any) -> Any:
    return None if value is None else (type(value).__name__, vars(value))


@strawberry.type
class Query:
    ok: bool = True


@strawberry.type
class Mutation:
    @strawberry.mutation
    async def record(
        self, info: Info, code: str, scan: ScanInput | None = None, pair: Pair | None = None
    ) -> str:
        seen.append({"code": code, "scan": _fields(scan), "pair": _fields(pair)})
        return info.field_name


@contextmanager
def _strawberry_walk() -> Iterator[None]:
    definitions = [get_object_definition(cls, strict=True) for cls in (ScanInput, Pair)]
    hooks = [definition.from_input for definition in definitions]
    for definition in definitions:
        definition.from_input = None
    try:
        yield
    finally:
        for definition, hook in zip(definitions, hooks, strict=True):
            definition.from_input = hook


async def _received(compiled: bool, query: str, variables: dict[str, Any]) -> Any:
    seen.clear()
    schema = strawberry.Schema(
        query=Query,
        mutation=Mutation,
        execution_context_class=compiled_executor(PlanCache() if compiled else None),
    )
    context = Context()
    result = await schema.execute(query, variable_values=variables, context_value=context)
    # None: the variables did not coerce, and neither executor ran.
    assert context.execution in ("compiled" if compiled else "graphql-core", None)
    return json.dumps([result.data, [e.message for e in result.errors or ()], seen])


async def _agree(query: str, variables: dict[str, Any]) -> tuple[str, str]:
    ours = await _received(True, query, variables)
    with _strawberry_walk():
        theirs = await _received(False, query, variables)
    return ours, theirs


_TEXT = st.none() | st.text(max_size=6)
_SCAN = st.dictionaries(
    st.sampled_from(["country", "city", "deviceFingerprint", "userAgent"]), _TEXT
)
_PAIR = st.fixed_dictionaries(
    {"left": st.integers(-(2**31), 2**31 - 1)},
    optional={
        "right": _TEXT,
        "ratio": st.none() | st.floats(allow_nan=False, allow_infinity=False),
        "flag": st.none() | st.booleans(),
    },
)
_VARIABLES = (
    "mutation($c: String!, $s: ScanInput, $p: Pair) { record(code: $c, scan: $s, pair: $p) }"
)
_OMITTED = "mutation($c: String!) { record(code: $c) }"
_LITERAL = 'mutation { record(code: "X", scan: {country: "FR", city: null}, pair: {left: 2}) }'
_NESTED = (
    "mutation($c: String!, $city: String) "
    '{ record(code: $c, scan: {country: "FR", city: $city}, pair: {left: 7, flag: true}) }'
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    scan=st.none() | _SCAN,
    pair=st.none() | _PAIR,
    sent=st.sets(st.sampled_from(["s", "p"])),
)
async def test_inputs_from_variables_are_what_strawberry_builds(
    scan: dict[str, Any] | None, pair: dict[str, Any] | None, sent: set[str]
) -> None:
    variables: dict[str, Any] = {"c": "CODE"}
    if "s" in sent:
        variables["s"] = scan
    if "p" in sent:
        variables["p"] = pair
    ours, theirs = await _agree(_VARIABLES, variables)
    assert ours == theirs


@pytest.mark.parametrize(
    ("query", "variables"),
    [
        (_OMITTED, {"c": "A"}),
        (_LITERAL, {}),
        (_NESTED, {"c": "B", "city": "Paris"}),
        (_NESTED, {"c": "B"}),
        (_VARIABLES, {"c": "C", "p": {"left": "not a number"}}),
    ],
)
async def test_literal_and_omitted_inputs_are_what_strawberry_builds(
    query: str, variables: dict[str, Any]
) -> None:
    ours, theirs = await _agree(query, variables)
    assert ours == theirs


async def test_a_converter_bug_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Planted fault: a converter that drops the city is caught by the same
    comparison, so the compiled path does build the input itself."""
    variables = {"c": "D", "s": {"country": "FR", "city": "Lyon"}}
    ours, theirs = await _agree(_VARIABLES, variables)
    assert ours == theirs
    converter = LeafBuilder.converter

    def dropping(self: LeafBuilder, name_converter: Any) -> Any:
        convert = converter(self, name_converter)
        return lambda value: convert(value and {k: v for k, v in value.items() if k != "city"})

    monkeypatch.setattr(LeafBuilder, "converter", dropping)
    ours, theirs = await _agree(_VARIABLES, variables)
    assert ours != theirs
