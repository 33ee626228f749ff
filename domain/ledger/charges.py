"""The standard transactions' lines: registration fees and credit grants."""

from __future__ import annotations

from decimal import Decimal

from domain.errors import BadUserInput

from .accounts import PLATFORM_GRANTS, PLATFORM_REVENUE, brand_account
from .amounts import CREDIT, check_amount, require_positive
from .transactions import LedgerLine

__all__ = [
    "FREE_PLAN_GRANT",
    "REGISTRATION_FEE_DEFAULT",
    "free_plan_grant_lines",
    "grant_lines",
    "registration_fee_lines",
]

REGISTRATION_FEE_DEFAULT = Decimal("1.00")
FREE_PLAN_GRANT = Decimal("10.00")


def registration_fee_lines(
    brand_id: str, fee: Decimal, *, count: int = 1, currency: str = CREDIT
) -> tuple[LedgerLine, ...]:
    """Brand credits -> platform revenue for ``count`` registrations.

    A zero fee yields no lines: there is nothing to post, and a transaction of
    zero lines would not balance anyway.
    """
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise BadUserInput("count must be a positive integer")
    fee = check_amount(fee, currency)
    if fee < 0:
        raise BadUserInput("The registration fee must not be negative")
    total = check_amount(fee * count, currency)
    if total.is_zero():
        return ()
    return (
        LedgerLine(brand_account(brand_id), currency, -total),
        LedgerLine(PLATFORM_REVENUE, currency, total),
    )


def grant_lines(
    brand_id: str, amount: Decimal, *, currency: str = CREDIT
) -> tuple[LedgerLine, ...]:
    """Platform grants -> brand credits."""
    amount = require_positive(check_amount(amount, currency))
    return (
        LedgerLine(PLATFORM_GRANTS, currency, -amount),
        LedgerLine(brand_account(brand_id), currency, amount),
    )


def free_plan_grant_lines(
    brand_id: str, amount: Decimal = FREE_PLAN_GRANT
) -> tuple[LedgerLine, ...]:
    return grant_lines(brand_id, amount, currency=CREDIT)
