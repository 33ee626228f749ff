"""Variables coerced with their signatures kept (``variables.py``) are what
graphql-core's ``get_variable_values`` makes of them, for generated values
of every kind (right, wrong, null, left out); anything else is left to it."""

from __future__ import annotations

from typing import Any

import pytest
from graphql import parse
from graphql.execution.values import get_variable_values
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.graphql.execution import input_coercion
from api.graphql.execution.variables import Variables
from api.graphql.schema import schema

SCHEMA = schema.graphql_schema
OPERATIONS = [
    "mutation($code: String!, $scan: ScanInput) { __typename }",
    "query($ids: [ID!]!, $n: Int, $f: Float, $b: Boolean, $s: ScanInput!) { __typename }",
    "query($ids: [[ID]], $c: ScanResult) { __typename }",
]
NAMES = ["code", "scan", "ids", "n", "f", "b", "s", "c"]
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False)
    | st.sampled_from(["", "FR", "AUTHENTIC", "x" * 3])
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["country", "city", "deviceFingerprint", "userAgent", "other"]),
            inner,
            max_size=4,
        )
    ),
    max_leaves=8,
)


def _definitions(text: str) -> Any:
    return parse(text).definitions[0].variable_definitions  # type: ignore[attr-defined]


def _plain(values: Any) -> Any:
    sources = {
        name: (str(source.signature.type), source.signature.name, repr(source.value))
        for name, source in values.sources.items()
    }
    return sources, values.coerced


def _theirs(text: str, inputs: dict[str, Any]) -> Any:
    return get_variable_values(SCHEMA, _definitions(text), inputs)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.sampled_from(OPERATIONS),
    inputs=st.dictionaries(st.sampled_from(NAMES), _VALUES, max_size=6),
)
def test_coerced_as_graphql_core_coerces(text: str, inputs: dict[str, Any]) -> None:
    ours = Variables(SCHEMA, _definitions(text)).coerce(inputs)
    theirs = _theirs(text, inputs)
    if ours is None:
        return  # left to graphql-core, which decides alone
    assert not isinstance(theirs, list), theirs
    assert _plain(ours) == _plain(theirs)


def test_the_plain_case_is_taken_and_the_rest_left() -> None:
    """Positive control for the comparison above: valid values are coerced
    here; defaults, missing non-null and wrong values are not."""
    verify = _definitions(OPERATIONS[0])
    taken = Variables(SCHEMA, verify).coerce({"code": "A", "scan": {"country": "FR"}})
    scan = {"country": "FR", "city": None, "deviceFingerprint": None, "userAgent": None}
    assert taken is not None and taken.coerced == {"code": "A", "scan": scan}
    assert Variables(SCHEMA, verify).coerce({"scan": None}) is None
    assert Variables(SCHEMA, verify).coerce({"code": 3}) is None
    defaulted = _definitions('query($c: String = "x") { __typename }')
    assert Variables(SCHEMA, defaulted).coerce({"c": "y"}) is None
    wrapped = Variables(SCHEMA, _definitions(OPERATIONS[1])).coerce(
        {"ids": "one", "s": {}, "n": None}
    )
    assert wrapped is not None and wrapped.coerced["ids"] == ["one"]


def test_a_coercion_bug_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Planted fault: a single id not made a list (a string taken for a list)."""
    monkeypatch.setattr(input_coercion, "is_iterable", lambda value: True)
    inputs = {"ids": "one", "s": {}}
    ours = Variables(SCHEMA, _definitions(OPERATIONS[1])).coerce(inputs)
    theirs = _theirs(OPERATIONS[1], inputs)
    assert ours is not None and not isinstance(theirs, list)
    assert _plain(ours) != _plain(theirs)


CHOSEN = [
    (0, {"code": "A", "scan": {"other": "x"}}),
    (0, {"code": "A", "scan": {"country": "FR", "other": None}}),
    (0, {"code": "A", "scan": {"country": 3}}),
    (0, {"code": "A", "scan": ["FR"]}),
    (0, {"code": "A", "scan": None}),
    (0, {"code": None}),
    (1, {"ids": ["a", None], "s": {}}),
    (1, {"ids": [1, "b"], "s": {"city": "Paris"}, "n": 2.0, "f": 1, "b": True}),
    (1, {"ids": "one", "s": {}, "n": 2**31}),
    (2, {"ids": ["a", ["b"]], "c": "AUTHENTIC"}),
    (2, {"ids": [[None]], "c": "NOT_A_RESULT"}),
]


@pytest.mark.parametrize(("operation", "inputs"), CHOSEN)
def test_chosen_values_are_taken_exactly_when_graphql_core_takes_them(
    operation: int, inputs: dict[str, Any]
) -> None:
    text = OPERATIONS[operation]
    ours = Variables(SCHEMA, _definitions(text)).coerce(inputs)
    theirs = _theirs(text, inputs)
    assert (ours is None) == isinstance(theirs, list), theirs
    if ours is not None:
        assert _plain(ours) == _plain(theirs)
