"""What commands work with: the per-process collaborators (``Services``) and
the per-call view of them (``CommandContext``).

Commands type against the ``CommandContext`` and ``Reads`` protocols rather
than the GraphQL layer's request context, so the CLI jobs and the resolvers
can both call them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, Protocol

from domain.ledger import FREE_PLAN_GRANT, REGISTRATION_FEE_DEFAULT
from domain.signing import KeyRing
from storage import AccessPattern, Item, Page, Storage, WriteAction

from .auth import KeyCache, Principal
from .pipeline.committing import CommittingStorage
from .pipeline.events import OutboxEvent
from .pipeline.service import Pipeline, outbox_actions
from .webhooks.selections import WebhookSelections

__all__ = [
    "CLAIM_TTL_DEFAULT",
    "CommandContext",
    "Reads",
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
    longer recognised across scans. Where ``pipeline`` runs, ``storage`` is
    built as its committing storage, so the relay hears of outbox items the
    moment they commit.
    """

    storage: Storage
    admin_key_hash: str
    key_ring: KeyRing
    hash_salt: bytes = field(repr=False)
    claim_ttl: timedelta = CLAIM_TTL_DEFAULT
    registration_fee: Decimal = REGISTRATION_FEE_DEFAULT
    free_plan_credits: Decimal = FREE_PLAN_GRANT
    clock: Callable[[], datetime] = utcnow
    public_url: str = "http://127.0.0.1:8000"
    """Base of the verify and QR URLs printed on labels (``domain.labels``)."""
    pipeline: Pipeline | None = None
    """The threat pipeline of this process; None where nothing runs it (commands
    still enqueue their events, for a relay elsewhere)."""
    keys: KeyCache = field(default_factory=lambda: KeyCache(timedelta(0)))
    """API keys read lately (``PROOFGATE_KEY_CACHE_MS``); keeps none by default."""
    selections: WebhookSelections | None = None
    """Checks webhooks' GraphQL documents; None: webhooks take none."""

    def enqueue(self, event: OutboxEvent) -> list[WriteAction]:
        """The actions that hand ``event`` to the threat pipeline, for the
        command's own transaction: an event is delivered exactly when the change
        it describes commits. Without a pipeline in this process the outbox item
        is still written, for a relay elsewhere."""
        if self.pipeline is not None:
            if isinstance(self.storage, CommittingStorage):
                # Commands write through ``storage``: born claimed there.
                return self.storage.enqueue(event)
            return self.pipeline.enqueue(event)
        return outbox_actions(event, now=self.clock())


class Reads(Protocol):
    """Request-scoped reads by access pattern; the GraphQL layer's DataLoaders
    satisfy it, so a command and the fields of its result share one cache."""

    async def item(self, ap: AccessPattern, /, **params: Any) -> Item | None: ...

    async def items(
        self, ap: AccessPattern, params: Sequence[Mapping[str, Any]]
    ) -> list[Item | None]: ...

    async def page(
        self,
        ap: AccessPattern,
        params: Mapping[str, Any],
        *,
        first: int | None = None,
        after: str | None = None,
    ) -> Page: ...

    def prime(self, ap: AccessPattern, item: Item, /, **params: Any) -> None: ...

    def forget(self, ap: AccessPattern, /, **params: Any) -> None: ...


class CommandContext(Protocol):
    """Who calls a command, with what, and when."""

    @property
    def services(self) -> Services: ...

    @property
    def principal(self) -> Principal: ...

    @property
    def loaders(self) -> Reads: ...

    @property
    def storage(self) -> Storage: ...

    def now(self) -> datetime: ...
