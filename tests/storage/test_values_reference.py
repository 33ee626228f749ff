"""``normalize_value``, ``normalize_number`` and ``sized_item`` agree with the
plain checks they replaced (kept here as the oracle): the same values of the
same types, the same sizes, and the same refusal with the same message, for
values of every kind."""

from __future__ import annotations

import enum
import types
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from domain.errors import LimitExceeded
from storage import values
from storage.limits import (
    ITEM_MAX_BYTES,
    NUMBER_MAX_DIGITS,
    NUMBER_MAX_EXPONENT,
    NUMBER_MIN_EXPONENT,
)
from storage.values import item_size, normalize_number, normalize_value, sized_item
from tests._support.identical import identical

_CEILING = 10 ** (NUMBER_MAX_EXPONENT + 1)


def _number(number: Any) -> Any:
    if isinstance(number, bool) or not isinstance(number, (int, Decimal)):
        raise LimitExceeded(f"Numbers are int or Decimal, not {type(number).__name__}")
    if isinstance(number, int):
        if abs(number) >= _CEILING:
            raise LimitExceeded(f"Number magnitude exceeds 1E+{NUMBER_MAX_EXPONENT + 1}")
        if len(str(abs(number)).rstrip("0")) > NUMBER_MAX_DIGITS:
            raise LimitExceeded(f"Number has more than {NUMBER_MAX_DIGITS} significant digits")
        return number
    if not number.is_finite():
        raise LimitExceeded("NaN and Infinity cannot be stored")
    if not number:
        return 0
    sign, digits, exponent = values._significant(number)
    if len(digits) > NUMBER_MAX_DIGITS:
        raise LimitExceeded(f"Number has more than {NUMBER_MAX_DIGITS} significant digits")
    adjusted = exponent + len(digits) - 1
    if not NUMBER_MIN_EXPONENT <= adjusted <= NUMBER_MAX_EXPONENT:
        raise LimitExceeded(
            f"Number magnitude outside 1E{NUMBER_MIN_EXPONENT}..1E+{NUMBER_MAX_EXPONENT + 1}"
        )
    if exponent >= 0:
        return int(Decimal((sign, digits, exponent)))
    return Decimal((sign, digits, exponent))


def _value(value: Any) -> Any:
    if isinstance(value, str):
        values._utf8_size(value)
        return value
    if value is None or isinstance(value, (bool, bytes)):
        return value
    if isinstance(value, (int, Decimal)):
        return _number(value)
    if isinstance(value, float):
        raise LimitExceeded("Floats cannot be stored exactly; use int or Decimal")
    if isinstance(value, Mapping):
        return {values._attribute_name(k): _value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_value(v) for v in value]
    raise LimitExceeded(f"Unsupported attribute type {type(value).__name__}")


def _outcome(function: Any, value: Any) -> tuple[str, Any]:
    try:
        return "value", function(value)
    except LimitExceeded as error:
        return "refused", error.message


class _Level(enum.IntEnum):
    HIGH = 3


_edges = [
    10**38 - 1,
    10**38,
    10**38 + 1,
    -(10**38) - 7,
    -(10**38),
    -(10**38) + 1,
    10**126 - 1,
    10**126,
    10**40,
    0,
]
_ints = st.integers() | st.sampled_from(_edges) | st.integers(-(10**130), 10**130)
_leaves = st.one_of(
    st.none(),
    st.booleans(),
    _ints,
    st.decimals(),
    st.floats(),
    st.text(max_size=5) | st.just("\ud800"),
    st.binary(max_size=3),
    st.sampled_from([_Level.HIGH, object(), frozenset()]),
)
_keys = st.text(max_size=3) | st.sampled_from(["", "\udc00"]) | st.integers(0, 2)
_values = st.recursive(
    _leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(_keys, inner, max_size=3),
        st.dictionaries(_keys, inner, max_size=3).map(types.MappingProxyType),
    ),
    max_leaves=10,
)


@settings(max_examples=600)
@given(_values)
def test_normalize_value_is_the_plain_checks(value: Any) -> None:
    ours, theirs = _outcome(normalize_value, value), _outcome(_value, value)
    assert ours[0] == theirs[0]
    assert identical(ours[1], theirs[1]) if ours[0] == "value" else ours[1] == theirs[1]


@given(_ints | st.decimals() | st.booleans() | st.sampled_from([_Level.HIGH, 1.0]))
def test_normalize_number_is_the_plain_checks(number: Any) -> None:
    ours, theirs = _outcome(normalize_number, number), _outcome(_number, number)
    assert ours[0] == theirs[0]
    assert identical(ours[1], theirs[1]) if ours[0] == "value" else ours[1] == theirs[1]


def _sized(item: Any) -> tuple[Any, int]:
    """What ``sized_item`` did before it measured while it checked: normalise
    the whole item, then measure the copy."""
    normalized = {values._attribute_name(k): normalize_value(v) for k, v in item.items()}
    size = item_size(normalized)
    if size > ITEM_MAX_BYTES:
        raise LimitExceeded(f"Item size {size} bytes exceeds {ITEM_MAX_BYTES} bytes")
    return normalized, size


_valid = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**40), 10**40) | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(min_size=1, max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)
"""Values every check accepts, so the sizes of nested maps and lists are compared too."""
_items = (
    st.dictionaries(_keys, _values, max_size=6)
    | st.dictionaries(_keys, _values, max_size=4).map(types.MappingProxyType)
    | st.dictionaries(st.text(min_size=1, max_size=3), _valid, max_size=5)
)
_FILLER = ITEM_MAX_BYTES - len("PK") - len("SK") - 2 - len("x")


@settings(max_examples=600)
@given(_items)
@example({"PK": "p", "SK": "s", "x": "a" * _FILLER})
@example({"PK": "p", "SK": "s", "x": "a" * (_FILLER + 1)})
@example({"PK": "p", "SK": "s", "x": "é" * (_FILLER // 2)})
@example({"PK": "p", "SK": "s", "x": ["a" * (_FILLER - 5), 1]})
@example({"é": {"ü": [b"\x00", None, True, Decimal("1.50"), 10**37]}, "n": _Level.HIGH})
@example({"é": {"ü": [b"\x00", None, True, Decimal("1.50"), 10**40]}, "\ud800": 1})
def test_sized_item_is_normalize_then_measure(item: Any) -> None:
    ours, theirs = _outcome(sized_item, item), _outcome(_sized, item)
    assert ours[0] == theirs[0]
    if ours[0] == "value":
        assert identical(ours[1][0], theirs[1][0]) and ours[1][1] == theirs[1][1]
    else:
        assert ours[1] == theirs[1]
