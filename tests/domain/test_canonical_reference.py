"""``normalize_json`` and ``canonical_json`` agree with the plain walk they
replaced (kept here as the oracle): the same values, the same bytes, and the
same refusal with the same message, for values of every kind a caller may pass."""

from __future__ import annotations

import json
import math
import types
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from domain.canonical import MAX_NESTING, SAFE_INTEGER_MAX, canonical_json, normalize_json
from domain.errors import BadUserInput
from tests._support.identical import identical

_HINT = 'Use integers, or send fractional and very large numbers as strings ("1.50").'


def _integer(value: Any, path: str) -> int:
    if isinstance(value, float):
        if not (math.isfinite(value) and value.is_integer()):
            raise BadUserInput(f"{path}: {value!r} is not an integer", hint=_HINT)
        number = int(value)
    elif isinstance(value, Decimal):
        if not (value.is_finite() and value == value.to_integral_value()):
            raise BadUserInput(f"{path}: {value} is not an integer", hint=_HINT)
        number = int(value)
    else:
        number = value
    if abs(number) > SAFE_INTEGER_MAX:
        raise BadUserInput(f"{path}: {number} is outside -(2**53-1)..2**53-1", hint=_HINT)
    return number


def _string(value: str, path: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise BadUserInput(f"{path}: string is not valid Unicode (lone surrogate)") from None
    return value


def _reference(value: object, path: str, depth: int) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, (int, float, Decimal)):
        return _integer(value, path)
    if isinstance(value, str):
        return _string(value, path)
    if isinstance(value, (Mapping, list, tuple)):
        if depth >= MAX_NESTING:
            raise BadUserInput(f"{path}: nested more than {MAX_NESTING} levels")
        if isinstance(value, Mapping):
            normalized = {}
            for key, item in value.items():
                if not isinstance(key, str):
                    raise BadUserInput(f"{path}: object keys must be strings")
                normalized[_string(key, path)] = _reference(item, f"{path}.{key}", depth + 1)
            return normalized
        return [_reference(item, f"{path}[{index}]", depth + 1) for index, item in enumerate(value)]
    raise BadUserInput(f"{path}: {type(value).__name__} is not a JSON value")


def _outcome(function: Any, value: object) -> tuple[str, Any]:
    try:
        return "value", function(value)
    except BadUserInput as error:
        return "refused", error.message


_keys = st.text(max_size=4) | st.sampled_from(["a.b", "[0]", "\ud800", "é"])
_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**60), 2**60),
    st.floats(allow_nan=True, allow_infinity=True),
    st.decimals(allow_nan=True, allow_infinity=True, places=2),
    st.text(max_size=6),
    st.sampled_from(["\ud800", "\udfff x", b"x", frozenset([1]), object()]),
)
_values = st.recursive(
    _leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(_keys, inner, max_size=3),
        st.dictionaries(_keys, inner, max_size=3).map(types.MappingProxyType),
        st.dictionaries(st.integers(0, 3) | st.none(), inner, min_size=1, max_size=2),
    ),
    max_leaves=12,
)


@settings(max_examples=500)
@given(_values)
def test_normalize_json_is_the_plain_walk(value: object) -> None:
    ours = _outcome(lambda v: normalize_json(v, field="data"), value)
    theirs = _outcome(lambda v: _reference(v, "data", 0), value)
    assert ours[0] == theirs[0]
    if ours[0] == "value":
        assert identical(ours[1], theirs[1])
        assert canonical_json(value, field="data") == json.dumps(
            theirs[1], sort_keys=True, separators=(",", ":"), ensure_ascii=False
        ).encode("utf-8")
    else:
        assert ours[1] == theirs[1]


def test_deep_paths_are_spelled_as_before() -> None:
    value = {"a": [{"b.c": [0, 1.5]}]}
    with_message = _outcome(lambda v: normalize_json(v, field="m"), value)
    assert with_message == ("refused", "m.a[0].b.c[1]: 1.5 is not an integer")
    nested: Any = 1
    for _ in range(MAX_NESTING + 1):
        nested = [nested]
    assert _outcome(normalize_json, nested) == _outcome(lambda v: _reference(v, "value", 0), nested)
