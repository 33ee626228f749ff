from __future__ import annotations

from decimal import Decimal
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from storage.sqlite._codec import decode_item, encode_item
from storage.values import normalize_number


def same(left: Any, right: Any) -> bool:
    """Equal and of the same types all the way down (Decimal("1") == 1 is not enough)."""
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(same(v, right[k]) for k, v in left.items())
    if isinstance(left, list):
        return len(left) == len(right) and all(same(a, b) for a, b in zip(left, right, strict=True))
    return bool(left == right)


def round_trip(item: dict[str, Any]) -> dict[str, Any]:
    return decode_item(encode_item(item))


def test_numbers_round_trip_exactly() -> None:
    item = {
        "int": 7,
        "negative": -12,
        "big": 10**37 + 1,
        "decimal": Decimal("0.1"),
        "digits38": Decimal("0.12345678901234567890123456789012345678"),
        "tiny": Decimal("1E-130"),
        "negative_decimal": Decimal("-2.5"),
        "zero": 0,
    }
    decoded = round_trip(item)
    assert same(decoded, item)


def test_bytes_and_nested_values_round_trip() -> None:
    item = {
        "raw": b"\x00\xffpayload",
        "empty": b"",
        "map": {"inner": {"list": [1, Decimal("1.5"), b"\x01", None, True, "s"]}, "flag": False},
        "text": "caf\u00e9 \U0001f600 \x00 nul",
    }
    assert same(round_trip(item), item)


def test_maps_that_look_like_tags_stay_maps() -> None:
    item = {
        "\x00b": "not bytes",
        "m": {"\x00b": "AAAA"},
        "n": {"\x00\x00b": 1, "\x00": 2},
        "backslash": "\\u0000b",
    }
    assert same(round_trip(item), item)


def test_plain_items_are_compact_json() -> None:
    text = encode_item({"PK": "A", "n": 1, "d": Decimal("1.5"), "l": [True, None]})
    assert text == '{"PK":"A","n":1,"d":1.5,"l":[true,null]}'


def test_non_ascii_is_stored_as_utf8_not_escaped() -> None:
    assert encode_item({"s": "\u00e9"}) == '{"s":"\u00e9"}'


_numbers = st.one_of(
    st.integers(min_value=-(10**38) + 1, max_value=10**38 - 1),
    st.decimals(
        allow_nan=False, allow_infinity=False, places=6, min_value=-(10**20), max_value=10**20
    ),
).map(normalize_number)
_scalars = st.one_of(st.none(), st.booleans(), st.text(), st.binary(), _numbers)
_values = st.recursive(
    _scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(min_size=1), children, max_size=4)
    ),
    max_leaves=20,
)


@given(st.dictionaries(st.text(min_size=1), _values, max_size=6))
def test_any_item_round_trips_exactly(item: dict[str, Any]) -> None:
    assert same(round_trip(item), item)
