"""The per-request context resolvers receive as ``info.context``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from strawberry.types import Info as StrawberryInfo

from domain.ledger import FREE_PLAN_GRANT, REGISTRATION_FEE_DEFAULT
from domain.signing import KeyRing
from storage import Storage
from storage.trace import Trace

from .auth import Principal
from .loaders import Loaders

if TYPE_CHECKING:
    from .pipeline.service import Pipeline

__all__ = [
    "CLAIM_TTL_DEFAULT",
    "Info",
    "RequestContext",
    "Services",
    "utcnow",
]

CLAIM_TTL_DEFAULT = timedelta(days=365)


def utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass
class Services:
    """Long-lived, per-process collaborators, built once at start-up.

    ``key_ring`` signs new certificates with its active key and verifies old
    ones with any key it holds. ``hash_salt`` keys the salted hashes of device
    fingerprints and IPs; it must stay secret and stable, or a device is no
    longer recognised across scans.
    """

    storage: Storage
    admin_key_hash: str
    key_ring: KeyRing
    hash_salt: bytes = field(repr=False)
    claim_ttl: timedelta = CLAIM_TTL_DEFAULT
    registration_fee: Decimal = REGISTRATION_FEE_DEFAULT
    free_plan_credits: Decimal = FREE_PLAN_GRANT
    clock: Callable[[], datetime] = utcnow
    pipeline: Pipeline | None = None
    """The threat pipeline of this process; None where nothing runs it (commands
    still enqueue their events, for a relay elsewhere)."""


@dataclass
class RequestContext:
    services: Services
    principal: Principal
    loaders: Loaders
    request_id: str
    trace: Trace | None = None
    request: Any = None
    response: Any = None
    execution: str | None = None
    """Which executor ran the operation: "compiled" or "graphql-core"; None
    while none has (an operation refused before execution)."""

    @property
    def storage(self) -> Storage:
        return self.services.storage

    def now(self) -> datetime:
        return self.services.clock()


Info = StrawberryInfo[RequestContext, None]
