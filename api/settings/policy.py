"""What registering costs, what a FREE brand starts with, how long a claim lasts.

``Policy`` is part of ``Settings`` (``settings.policy``), read from the
variables ``PolicyVariables`` declares, and reaches the resolvers through
``Services``. Amounts are CREDIT, at its scale of 2.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import Annotated

from pydantic import AfterValidator, BaseModel

from api.settings.environment import Malformed
from api.settings.formats import CreditAmount, Positive
from domain.errors import ConfigurationError, ProofgateError
from domain.ledger import CREDIT, FREE_PLAN_GRANT, REGISTRATION_FEE_DEFAULT, check_amount
from services.context import CLAIM_TTL_DEFAULT

__all__ = ["Policy", "PolicyVariables"]

_SECOND = timedelta(seconds=1)


@dataclass(frozen=True, kw_only=True)
class Policy:
    registration_fee: Decimal = REGISTRATION_FEE_DEFAULT
    """Charged per product in the transaction that registers it."""
    free_plan_credits: Decimal = FREE_PLAN_GRANT
    """Granted to a FREE brand when it registers; zero grants nothing."""
    claim_ttl: timedelta = CLAIM_TTL_DEFAULT
    """How long a consumer's claim lasts before the product can be claimed again."""

    def __post_init__(self) -> None:
        for name in ("registration_fee", "free_plan_credits"):
            try:
                check_amount(getattr(self, name), CREDIT)
            except ProofgateError as error:
                raise ConfigurationError(f"Policy {name}: {error.message}") from None
        if self.registration_fee <= 0:
            raise ConfigurationError("Policy registration_fee must be greater than zero")
        if self.free_plan_credits < 0:
            raise ConfigurationError("Policy free_plan_credits must not be negative")
        if self.claim_ttl < _SECOND:
            raise ConfigurationError("Policy claim_ttl must be at least one second")


def _greater_than_zero(amount: Decimal) -> Decimal:
    if amount <= 0:
        raise Malformed(f"must be greater than zero, got {amount}")
    return amount


def _not_negative(amount: Decimal) -> Decimal:
    if amount < 0:
        raise Malformed(f"must not be negative, got {amount}")
    return amount


class PolicyVariables(BaseModel):
    registration_fee: Annotated[CreditAmount, AfterValidator(_greater_than_zero)] = (
        REGISTRATION_FEE_DEFAULT
    )
    free_plan_credits: Annotated[CreditAmount, AfterValidator(_not_negative)] = FREE_PLAN_GRANT
    claim_ttl_seconds: Positive = CLAIM_TTL_DEFAULT // _SECOND

    def policy(self) -> Policy:
        return Policy(
            registration_fee=self.registration_fee,
            free_plan_credits=self.free_plan_credits,
            claim_ttl=self.claim_ttl_seconds * _SECOND,
        )
