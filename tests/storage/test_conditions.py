from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from domain.errors import AccessPatternError, LimitExceeded
from storage.conditions import (
    All,
    Any_,
    AttributeAbsent,
    AttributeExists,
    Compare,
    Comparison,
    ItemAbsent,
    ItemExists,
    evaluate,
)

ITEM: dict[str, Any] = {
    "PK": "P#1",
    "SK": "META",
    "status": "ACTIVE",
    "count": 5,
    "price": Decimal("1.5"),
    "flag": True,
    "nothing": None,
    "blob": b"\x00\xff",
    "tags": ["a", 1],
    "meta": {"k": 1},
    "name": "é",
}

ALL_OPS = list(Comparison)
ORDERED = [Comparison.LT, Comparison.LE, Comparison.GT, Comparison.GE]


def test_no_condition_always_holds() -> None:
    assert evaluate(None, None) is True
    assert evaluate(None, ITEM) is True


def test_item_existence() -> None:
    assert evaluate(ItemExists(), ITEM) is True
    assert evaluate(ItemExists(), None) is False
    assert evaluate(ItemAbsent(), None) is True
    assert evaluate(ItemAbsent(), ITEM) is False


def test_attribute_existence() -> None:
    assert evaluate(AttributeExists("status"), ITEM) is True
    assert evaluate(AttributeExists("nothing"), ITEM) is True
    assert evaluate(AttributeExists("missing"), ITEM) is False
    assert evaluate(AttributeExists("status"), None) is False
    assert evaluate(AttributeAbsent("missing"), ITEM) is True
    assert evaluate(AttributeAbsent("nothing"), ITEM) is False
    assert evaluate(AttributeAbsent("status"), None) is True


@pytest.mark.parametrize("op", ALL_OPS)
def test_comparison_with_missing_attribute_or_item(op: Comparison) -> None:
    expected = op is Comparison.NE
    assert evaluate(Compare("missing", op, 1), ITEM) is expected
    assert evaluate(Compare("count", op, 1), None) is expected


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("status", 5),
        ("count", "5"),
        ("flag", 1),
        ("count", True),
        ("blob", "\x00\xff"),
        ("nothing", 0),
    ],
)
def test_type_mismatch_is_unequal_and_unordered(name: str, value: Any) -> None:
    assert evaluate(Compare(name, "=", value), ITEM) is False
    assert evaluate(Compare(name, "<>", value), ITEM) is True
    if not isinstance(value, bool) and value is not None:
        for op in ORDERED:
            assert evaluate(Compare(name, op, value), ITEM) is False


@pytest.mark.parametrize(
    ("stored", "value"),
    [
        (5, Decimal("5")),
        (5, Decimal("5.000")),
        (Decimal("1.5"), Decimal("1.50")),
        (10**20, Decimal("1E+20")),
    ],
)
def test_int_and_decimal_are_one_number_type(stored: Any, value: Any) -> None:
    item = {"n": stored}
    assert evaluate(Compare("n", "=", value), item) is True
    assert evaluate(Compare("n", "<>", value), item) is False
    assert evaluate(Compare("n", "<=", value), item) is True
    assert evaluate(Compare("n", "<", value), item) is False


@pytest.mark.parametrize(
    ("name", "op", "value", "expected"),
    [
        ("count", "<", 6, True),
        ("count", "<", 5, False),
        ("count", "<=", 5, True),
        ("count", ">", Decimal("4.99"), True),
        ("count", ">=", 6, False),
        ("price", "<", 2, True),
        ("price", ">", Decimal("1.49"), True),
        ("status", "<", "B", True),
        ("status", ">=", "ACTIVE", True),
        ("status", ">", "ACTIVE", False),
        ("status", "<", "active", True),
        # UTF-8 byte order: é (0xC3 0xA9) sorts after every ASCII character.
        ("name", ">", "~", True),
        ("name", "<", "\U0001f600", True),
        ("blob", ">", b"\x00\xfe", True),
        ("blob", "<", b"\x01", True),
    ],
)
def test_ordering(name: str, op: str, value: Any, expected: bool) -> None:
    assert evaluate(Compare(name, Comparison(op), value), ITEM) is expected


def test_equality_of_every_type() -> None:
    assert evaluate(Compare("status", "=", "ACTIVE"), ITEM)
    assert not evaluate(Compare("status", "=", "active"), ITEM)
    assert evaluate(Compare("flag", "=", True), ITEM)
    assert not evaluate(Compare("flag", "=", False), ITEM)
    assert evaluate(Compare("nothing", "=", None), ITEM)
    assert evaluate(Compare("blob", "=", b"\x00\xff"), ITEM)
    assert evaluate(Compare("tags", "=", ["a", 1]), ITEM)
    assert evaluate(Compare("tags", "=", ("a", Decimal(1))), ITEM)
    assert not evaluate(Compare("tags", "=", ["a", True]), ITEM)
    assert not evaluate(Compare("tags", "=", ["a"]), ITEM)
    assert evaluate(Compare("meta", "=", {"k": Decimal("1.0")}), ITEM)
    assert not evaluate(Compare("meta", "=", {"k": True}), ITEM)
    assert not evaluate(Compare("meta", "=", {"k": 1, "j": 2}), ITEM)
    assert evaluate(Compare("meta", "<>", {"k": 2}), ITEM)


def test_nested_all_and_any() -> None:
    active = Compare("status", "=", "ACTIVE")
    recalled = Compare("status", "=", "RECALLED")
    fresh = AttributeAbsent("claimedAt")
    assert evaluate(All(ItemExists(), Any_(recalled, All(active, fresh))), ITEM) is True
    assert (
        evaluate(All(ItemExists(), Any_(recalled, All(active, AttributeExists("claimedAt")))), ITEM)
        is False
    )
    assert evaluate(Any_(ItemAbsent(), All(active, Compare("count", "<", 10))), None) is True
    assert evaluate(All(ItemAbsent(), Compare("count", "<", 10)), None) is False
    assert evaluate(Any_(Compare("count", ">", 10), Compare("count", "<>", 5)), ITEM) is False


def test_empty_all_and_any_are_refused() -> None:
    with pytest.raises(AccessPatternError):
        All()
    with pytest.raises(AccessPatternError):
        Any_()


@pytest.mark.parametrize("name", ["", "a.b", "a[0]", "#x", ":v", "a b"])
def test_attribute_names_must_be_identifiers(name: str) -> None:
    with pytest.raises(AccessPatternError):
        AttributeExists(name)
    with pytest.raises(AccessPatternError):
        AttributeAbsent(name)
    with pytest.raises(AccessPatternError):
        Compare(name, "=", 1)


def test_float_values_are_refused() -> None:
    with pytest.raises(AccessPatternError):
        Compare("price", "=", 1.5)


@pytest.mark.parametrize("value", [True, None, ["a"], {"k": 1}])
@pytest.mark.parametrize("op", ORDERED)
def test_ordering_needs_a_number_string_or_binary(op: Comparison, value: Any) -> None:
    with pytest.raises(AccessPatternError):
        Compare("x", op, value)


@pytest.mark.parametrize("value", [Decimal("NaN"), Decimal("Infinity"), {1, 2}])
def test_values_dynamodb_cannot_hold_are_refused(value: Any) -> None:
    with pytest.raises(LimitExceeded):
        Compare("x", "=", value)


def test_operator_strings_are_coerced() -> None:
    assert Compare("x", "<>", 1).op is Comparison.NE  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Compare("x", "!=", 1)  # type: ignore[arg-type]


def test_compare_values_are_normalised() -> None:
    assert Compare("x", "=", Decimal("2.0")).value == 2
    assert isinstance(Compare("x", "=", Decimal("2.0")).value, int)
