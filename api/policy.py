"""What registering costs, what a FREE brand starts with, how long a claim lasts.

``Policy`` is part of ``Settings`` (``settings.policy``) and reaches the
resolvers through ``Services``. Amounts are CREDIT, at its scale of 2.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

from domain.errors import ConfigurationError, ProofgateError
from domain.ledger import CREDIT, FREE_PLAN_GRANT, REGISTRATION_FEE_DEFAULT, check_amount
from services.context import CLAIM_TTL_DEFAULT

from ._environment import Environment, invalid

__all__ = ["Policy"]

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

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> Policy:
        env = Environment(environ)
        fee = env.amount("PROOFGATE_REGISTRATION_FEE", REGISTRATION_FEE_DEFAULT, CREDIT)
        if fee <= 0:
            raise invalid("PROOFGATE_REGISTRATION_FEE", f"must be greater than zero, got {fee}")
        credits = env.amount("PROOFGATE_FREE_PLAN_CREDITS", FREE_PLAN_GRANT, CREDIT)
        if credits < 0:
            raise invalid("PROOFGATE_FREE_PLAN_CREDITS", f"must not be negative, got {credits}")
        default_ttl = CLAIM_TTL_DEFAULT // _SECOND
        ttl = env.positive("PROOFGATE_CLAIM_TTL_SECONDS", default_ttl)
        return cls(registration_fee=fee, free_plan_credits=credits, claim_ttl=ttl * _SECOND)
