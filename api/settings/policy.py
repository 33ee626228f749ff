"""What registering costs, what a FREE brand starts with, how long a claim lasts.

``Policy`` is part of ``Settings`` (``settings.policy``), a ``Section`` whose
fields are its variables, and reaches the resolvers through ``Services``.
Amounts are CREDIT, at its scale of 2.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Annotated

from pydantic import AfterValidator

from api.settings.environment import Malformed, Section
from api.settings.formats import CreditAmount, Positive
from domain.ledger import FREE_PLAN_GRANT, REGISTRATION_FEE_DEFAULT
from services.context import CLAIM_TTL_DEFAULT

__all__ = ["Policy"]

_SECOND = timedelta(seconds=1)


def _greater_than_zero(amount: Decimal) -> Decimal:
    if amount <= 0:
        raise Malformed(f"must be greater than zero, got {amount}")
    return amount


def _not_negative(amount: Decimal) -> Decimal:
    if amount < 0:
        raise Malformed(f"must not be negative, got {amount}")
    return amount


class Policy(Section):
    registration_fee: Annotated[CreditAmount, AfterValidator(_greater_than_zero)] = (
        REGISTRATION_FEE_DEFAULT
    )
    """Charged per product in the transaction that registers it."""
    free_plan_credits: Annotated[CreditAmount, AfterValidator(_not_negative)] = FREE_PLAN_GRANT
    """Granted to a FREE brand when it registers; zero grants nothing."""
    claim_ttl_seconds: Positive = CLAIM_TTL_DEFAULT // _SECOND

    @property
    def claim_ttl(self) -> timedelta:
        """How long a consumer's claim lasts before the product can be claimed again."""
        return self.claim_ttl_seconds * _SECOND
