"""What registering costs, what a FREE brand starts with, how long a claim lasts.

``Policy`` is part of ``Settings`` (``settings.policy``), each field declared
with its variable (``api.settings.declared``), and reaches the resolvers
through ``Services``.
Amounts are CREDIT, at its scale of 2.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import Annotated

from pydantic import AfterValidator

from api.settings.declared import Declared
from api.settings.environment import Malformed
from api.settings.formats import CreditAmount
from domain.ledger import FREE_PLAN_GRANT, REGISTRATION_FEE_DEFAULT
from domain.variables import variable
from services.context import CLAIM_TTL_DEFAULT

__all__ = ["Policy", "PolicyVariables"]

_SECOND = timedelta(seconds=1)


def _greater_than_zero(amount: Decimal) -> Decimal:
    if amount <= 0:
        raise Malformed(f"must be greater than zero, got {amount}")
    return amount


def _not_negative(amount: Decimal) -> Decimal:
    if amount < 0:
        raise Malformed(f"must not be negative, got {amount}")
    return amount


@dataclass(frozen=True, kw_only=True)
class Policy:
    registration_fee: Decimal = variable(REGISTRATION_FEE_DEFAULT, "registration_fee", format="fee")
    """Charged per product in the transaction that registers it."""
    free_plan_credits: Decimal = variable(FREE_PLAN_GRANT, "free_plan_credits", format="grant")
    """Granted to a FREE brand when it registers; zero grants nothing."""
    claim_ttl_seconds: int = variable(CLAIM_TTL_DEFAULT // _SECOND, "claim_ttl_seconds")

    def __post_init__(self) -> None:
        PolicyVariables.check(self)

    @property
    def claim_ttl(self) -> timedelta:
        """How long a consumer's claim lasts before the product can be claimed again."""
        return self.claim_ttl_seconds * _SECOND


_FORMATS = {
    "fee": Annotated[CreditAmount, AfterValidator(_greater_than_zero)],
    "grant": Annotated[CreditAmount, AfterValidator(_not_negative)],
}


class PolicyVariables(Declared, declares=Policy, formats=_FORMATS):
    pass
