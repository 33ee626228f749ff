from __future__ import annotations

from decimal import Decimal

import pytest

from domain.errors import BadUserInput
from domain.ledger import (
    CREDIT,
    FREE_PLAN_GRANT,
    PLATFORM_GRANTS,
    PLATFORM_REVENUE,
    REGISTRATION_FEE_DEFAULT,
    LedgerLine,
    brand_account,
    check_balanced,
    free_plan_grant_lines,
    grant_lines,
    registration_fee_lines,
)

BRAND = brand_account("brd_1")


def test_registration_fee_moves_credits_to_revenue() -> None:
    lines = registration_fee_lines("brd_1", REGISTRATION_FEE_DEFAULT)
    assert lines == (
        LedgerLine(BRAND, CREDIT, Decimal("-1.00")),
        LedgerLine(PLATFORM_REVENUE, CREDIT, Decimal("1.00")),
    )
    assert check_balanced(lines) == lines


def test_batch_fee_is_fee_times_count() -> None:
    lines = registration_fee_lines("brd_1", Decimal("0.35"), count=100)
    assert [str(entry.amount) for entry in lines] == ["-35.00", "35.00"]


def test_free_fee_posts_nothing() -> None:
    assert registration_fee_lines("brd_1", Decimal(0), count=3) == ()


@pytest.mark.parametrize(
    ("fee", "count"),
    [(Decimal("-1"), 1), (Decimal("0.001"), 1), (Decimal(1), 0), (Decimal(1), True)],
)
def test_registration_fee_refuses(fee: Decimal, count: int) -> None:
    with pytest.raises(BadUserInput):
        registration_fee_lines("brd_1", fee, count=count)


def test_free_plan_grant_is_ten_credits_from_grants() -> None:
    lines = free_plan_grant_lines("brd_1")
    assert str(FREE_PLAN_GRANT) == "10.00"
    assert lines == (
        LedgerLine(PLATFORM_GRANTS, CREDIT, Decimal("-10.00")),
        LedgerLine(BRAND, CREDIT, Decimal("10.00")),
    )
    assert check_balanced(lines) == lines


@pytest.mark.parametrize("amount", [Decimal(0), Decimal("-5"), Decimal("0.001")])
def test_grant_refuses(amount: Decimal) -> None:
    with pytest.raises(BadUserInput):
        grant_lines("brd_1", amount)
