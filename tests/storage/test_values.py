"""Sizes follow the published rules ("DynamoDB item sizes and formats" in the
DynamoDB developer guide): names and strings count UTF-8 bytes, binary its raw
bytes, a number one byte per two significant digits plus one, null and boolean
one byte, a list or map 3 bytes plus one byte and the size of each element."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.errors import LimitExceeded
from storage.limits import ITEM_MAX_BYTES, NUMBER_MAX_DIGITS
from storage.values import item_size, normalize_item, normalize_number, value_size

# --- numbers -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("number", "expected"),
    [
        (0, 0),
        (-7, -7),
        (Decimal("0"), 0),
        (Decimal("-0"), 0),
        (Decimal("0.000"), 0),
        (Decimal("5"), 5),
        (Decimal("5.000"), 5),
        (Decimal("1E+3"), 1000),
        (Decimal("-12.50"), Decimal("-12.5")),
        (Decimal("0.10"), Decimal("0.1")),
    ],
)
def test_numbers_are_normalised(number: int | Decimal, expected: int | Decimal) -> None:
    result = normalize_number(number)
    assert result == expected
    assert type(result) is type(expected)
    assert str(result) == str(expected)


def test_38_significant_digits_are_kept_exactly() -> None:
    exact = Decimal("1.2345678901234567890123456789012345678")
    assert len(exact.as_tuple().digits) == NUMBER_MAX_DIGITS
    assert normalize_number(exact) == exact
    assert str(normalize_number(exact)) == str(exact)
    big = 10**NUMBER_MAX_DIGITS - 1
    assert normalize_number(big) == big
    assert normalize_number(Decimal(big)) == big


@given(
    st.decimals(allow_nan=False, allow_infinity=False, places=None).filter(
        lambda d: d.copy_abs() < Decimal("1E+100")
    )
)
def test_normalising_never_changes_the_value(number: Decimal) -> None:
    try:
        result = normalize_number(number)
    except LimitExceeded:
        significant = format(number.copy_abs(), "f").replace(".", "").strip("0")
        assert len(significant) > NUMBER_MAX_DIGITS or number.copy_abs() < Decimal("1E-130")
        return
    assert result == number
    assert normalize_number(result) == result


@pytest.mark.parametrize(
    "number",
    [
        10**NUMBER_MAX_DIGITS + 1,
        Decimal("1.23456789012345678901234567890123456789"),
        Decimal("123456789012345678901234567890123456789"),
        Decimal("-0.000123456789012345678901234567890123456789"),
    ],
)
def test_more_than_38_significant_digits_are_refused(number: int | Decimal) -> None:
    with pytest.raises(LimitExceeded, match="38"):
        normalize_number(number)


def test_trailing_zeros_are_not_significant() -> None:
    assert normalize_number(10**50) == 10**50
    assert normalize_number(Decimal("1" + "0" * 60)) == 10**60


@pytest.mark.parametrize(
    "number",
    [10**126, -(10**126), Decimal("1E+126"), Decimal("1E-131"), 10**5000],
    ids=["1e126", "-1e126", "Decimal-1E+126", "Decimal-1E-131", "1e5000"],
)
def test_magnitudes_dynamodb_cannot_hold_are_refused(number: int | Decimal) -> None:
    with pytest.raises(LimitExceeded):
        normalize_number(number)


@pytest.mark.parametrize(
    "number",
    [10**126 - 10**88, Decimal("9.9999999999999999999999999999999999999E+125"), Decimal("1E-130")],
)
def test_extreme_magnitudes_within_range_are_kept(number: int | Decimal) -> None:
    assert normalize_number(number) == number


@pytest.mark.parametrize(
    "number", [Decimal("NaN"), Decimal("sNaN"), Decimal("Infinity"), Decimal("-Infinity")]
)
def test_nan_and_infinity_are_refused(number: Decimal) -> None:
    with pytest.raises(LimitExceeded):
        normalize_number(number)


@pytest.mark.parametrize("number", [1.5, 1.0, True, False, "1", None])
def test_floats_bools_and_others_are_refused(number: Any) -> None:
    with pytest.raises(LimitExceeded):
        normalize_number(number)


# --- item values ---------------------------------------------------------------


def test_item_normalisation_recurses_and_copies() -> None:
    source = {"PK": "a", "n": Decimal("2.0"), "l": ("x", Decimal("0.50")), "m": {"k": [Decimal(3)]}}
    result = normalize_item(source)
    assert result == {"PK": "a", "n": 2, "l": ["x", Decimal("0.5")], "m": {"k": [3]}}
    assert source["n"] == Decimal("2.0")


@pytest.mark.parametrize(
    "item",
    [
        {"f": 1.5},
        {"l": [1.5]},
        {"m": {"k": 0.1}},
        {"s": {"a", "b"}},
        {"o": object()},
        {"": 1},
        {"m": {"": 1}},
        {"m": {1: 1}},
        {"s": "\ud800"},
        {"\udc00": 1},
    ],
)
def test_values_dynamodb_refuses_are_refused(item: dict[Any, Any]) -> None:
    with pytest.raises(LimitExceeded):
        normalize_item(item)


def test_empty_strings_and_containers_are_allowed_outside_keys() -> None:
    assert normalize_item({"s": "", "l": [], "m": {}, "b": b""}) == {
        "s": "",
        "l": [],
        "m": {},
        "b": b"",
    }


# --- sizes ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "size"),
    [
        ("", 0),
        ("abc", 3),
        ("é", 2),
        ("€", 3),
        ("𝄞", 4),
        (b"", 0),
        (b"\x00\x01\x02", 3),
        (True, 1),
        (False, 1),
        (None, 1),
        (0, 1),
        (7, 2),
        (12, 2),
        (123, 3),
        (1000, 2),
        (-5, 2),
        (Decimal("1.5"), 2),
        (Decimal("0.001"), 2),
        (Decimal("123.45"), 4),
        (10**37 + 1, 20),
        ([], 3),
        ({}, 3),
        (["a"], 5),
        ([1, True, None], 3 + (2 + 1) + (1 + 1) + (1 + 1)),
        ({"k": "v"}, 3 + 1 + 1 + 1),
        ({"ké": [b"xy"]}, 3 + 3 + (3 + 2 + 1) + 1),
    ],
)
def test_value_sizes(value: Any, size: int) -> None:
    assert value_size(value) == size


def test_item_size_adds_attribute_names() -> None:
    item = {"PK": "P#1", "né": 12, "flags": [True], "m": {"a": None}}
    assert item_size(item) == (2 + 3) + (3 + 2) + (5 + 3 + 2) + (1 + 3 + 1 + 1 + 1)


def test_item_size_at_the_400_kb_boundary() -> None:
    assert ITEM_MAX_BYTES == 400 * 1024
    base = {"PK": "P#1", "SK": "META", "data": ""}
    filler = ITEM_MAX_BYTES - item_size(base)
    exact = {**base, "data": "x" * filler}
    assert item_size(exact) == ITEM_MAX_BYTES
    assert normalize_item(exact) == exact
    with pytest.raises(LimitExceeded, match="exceeds"):
        normalize_item({**base, "data": "x" * (filler + 1)})
    multibyte = {**base, "data": "x" * (filler - 1) + "é"}
    with pytest.raises(LimitExceeded):
        normalize_item(multibyte)


@given(st.integers(min_value=-(10**38) + 1, max_value=10**38 - 1))
def test_an_int_is_sized_as_its_decimal(number: int) -> None:
    """Integers take a shortcut past ``Decimal``; the size is the same."""
    assert value_size(number) == value_size(Decimal(number))


@given(st.text())
def test_a_string_is_sized_in_utf8_bytes(text: str) -> None:
    """ASCII text takes a shortcut past encoding; the size is the same."""
    try:
        expected = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        with pytest.raises(LimitExceeded):
            value_size(text)
        return
    assert value_size(text) == expected
