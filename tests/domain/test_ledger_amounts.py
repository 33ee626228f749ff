from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.errors import BadUserInput
from domain.ledger import (
    AMOUNT_MAX_INTEGER_DIGITS,
    CREDIT,
    check_amount,
    currency_scale,
    format_amount,
    parse_amount,
    require_positive,
)

LIMIT = Decimal(10) ** AMOUNT_MAX_INTEGER_DIGITS


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("0.10", "0.10"),
        ("1", "1.00"),
        ("1.5", "1.50"),
        ("-2.25", "-2.25"),
        ("1.000", "1.00"),
        ("-0", "0.00"),
        ("-0.00", "0.00"),
        ("999999999999999.99", "999999999999999.99"),
        ("-999999999999999.99", "-999999999999999.99"),
        (Decimal("0.1"), "0.10"),
        (Decimal("-0E+3"), "0.00"),
        (7, "7.00"),
    ],
)
def test_parse_amount_accepts(value: str | Decimal | int, expected: str) -> None:
    amount = parse_amount(value, CREDIT)
    assert isinstance(amount, Decimal)
    assert str(amount) == expected


@pytest.mark.parametrize(
    "value",
    [
        "0.001",
        "0.105",
        "1e-3",
        # The API writes plain notation and reads only that: no exponent, no "+".
        "+3",
        "1E+2",
        "25e-1",
        "1e-2",
        "1e2",
        Decimal("0.001"),
        "",
        " 1",
        "1 ",
        "1_000",
        "0x10",
        "1,00",
        "1.",
        ".5",
        "--1",
        "NaN",
        "nan",
        "sNaN",
        "Infinity",
        "-inf",
        "١٢",
        "1" * 65,
        "1000000000000000",
        "-1000000000000000",
        "1E+15",
        "1E+999999999999999999",
        "1e9999999999999999999999",
        "1e-9999999999999999999999",
        Decimal("NaN"),
        Decimal("sNaN"),
        Decimal("Infinity"),
        Decimal("-Infinity"),
        Decimal("1E+999999"),
        Decimal("1E-999999"),
    ],
    ids=repr,
)
def test_parse_amount_refuses(value: str | Decimal) -> None:
    with pytest.raises(BadUserInput):
        parse_amount(value, CREDIT)


@pytest.mark.parametrize("value", [1.5, 0.1, 1.0, True, None, [1]], ids=repr)
def test_parse_amount_refuses_floats_and_other_types(value: object) -> None:
    with pytest.raises(BadUserInput):
        parse_amount(value, CREDIT)  # type: ignore[arg-type]


@pytest.mark.parametrize("currency", ["USD", "credit", "", None])
def test_unknown_currency(currency: str) -> None:
    with pytest.raises(BadUserInput):
        parse_amount("1.00", currency)


def test_credit_scale() -> None:
    assert currency_scale(CREDIT) == 2


@given(st.decimals(min_value=-LIMIT + Decimal("0.01"), max_value=LIMIT - Decimal("0.01"), places=2))
def test_any_in_range_two_place_amount_round_trips(amount: Decimal) -> None:
    text = format_amount(amount, CREDIT)
    assert parse_amount(text, CREDIT) == amount
    assert parse_amount(str(amount), CREDIT) == amount
    assert format_amount(parse_amount(text, CREDIT), CREDIT) == text


@given(
    st.decimals(min_value=-1000, max_value=1000, places=3).filter(
        lambda d: d != d.quantize(Decimal("0.01"))
    )
)
def test_any_third_decimal_is_refused(amount: Decimal) -> None:
    with pytest.raises(BadUserInput):
        parse_amount(str(amount), CREDIT)


def test_check_amount_refuses_non_decimals() -> None:
    with pytest.raises(BadUserInput):
        check_amount(1.5, CREDIT)  # type: ignore[arg-type]


def test_format_amount_is_plain_notation() -> None:
    assert format_amount(Decimal("1E+2"), CREDIT) == "100.00"
    assert format_amount(Decimal("0.1"), CREDIT) == "0.10"


@pytest.mark.parametrize("amount", [Decimal("0.00"), Decimal("-0.01")])
def test_require_positive_refuses(amount: Decimal) -> None:
    with pytest.raises(BadUserInput):
        require_positive(amount)


def test_require_positive_returns_the_amount() -> None:
    assert require_positive(Decimal("0.01")) == Decimal("0.01")
