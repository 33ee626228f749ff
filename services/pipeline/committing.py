"""The store as commands see it while a pipeline runs: outbox items reach
this process's relay the moment the transaction that wrote them commits.

Without this the relay would learn of a new item only at its next poll; with
it, a scan's alerts are raised a few milliseconds after the scan commits, and
no claim is attempted before the item exists. While the relay's lane has
room, the item is even written claimed by it (``born_put``), so the relay
works it without a claim's write of its own (docs/design.md, Pipeline).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from storage import AccessPattern, Item, Page, Put, Storage, WriteAction

from .outbox.intake import is_webhook
from .outbox.items import Lease, born_put

__all__ = ["CommittingStorage", "Holder"]

_OUTBOX_ENTITY = "OutboxItem"


class Holder(Protocol):
    """What the relay offers commands (``Relay``)."""

    def reserve(self) -> Lease | None: ...
    def born(self, item: Item, lease: Lease) -> None: ...
    def expect(self, item: Item) -> None: ...


class CommittingStorage:
    """A ``Storage`` that hands every outbox item a successful
    ``transact_write`` created to ``relay``: born claimed when it reserved
    room, as a hint otherwise."""

    def __init__(self, inner: Storage, relay: Holder) -> None:
        self.inner = inner
        self.backend = inner.backend
        self._relay = relay

    async def get(self, ap: AccessPattern, /, **params: Any) -> Item | None:
        return await self.inner.get(ap, **params)

    async def batch_get(
        self, ap: AccessPattern, params: Sequence[Mapping[str, Any]]
    ) -> list[Item | None]:
        return await self.inner.batch_get(ap, params)

    async def query(
        self,
        ap: AccessPattern,
        params: Mapping[str, Any],
        *,
        tenant: str,
        first: int | None = None,
        after: str | None = None,
    ) -> Page:
        return await self.inner.query(ap, params, tenant=tenant, first=first, after=after)

    async def transact_write(self, actions: Sequence[WriteAction]) -> None:
        """An item written with a lease that then did not commit (as far as
        this process knows) costs nothing: if it did commit, it is claimable
        once its lease ends."""
        written, born, hinted = self._born(actions)
        await self.inner.transact_write(written)
        for item, lease in born:
            self._relay.born(item, lease)
        for item in hinted:
            self._relay.expect(item)

    def _born(
        self, actions: Sequence[WriteAction]
    ) -> tuple[Sequence[WriteAction], list[tuple[Item, Lease]], list[Item]]:
        """``actions`` with each outbox item the relay has room for born
        claimed by it; those items with their leases; the outbox items to
        hint instead."""
        born: list[tuple[Item, Lease]] = []
        hinted: list[Item] = []
        written: list[WriteAction] | None = None
        for index, action in enumerate(actions):
            if not isinstance(action, Put) or action.item.get("entity") != _OUTBOX_ENTITY:
                continue
            lease = None if is_webhook(action.item) else self._relay.reserve()
            if lease is None:
                hinted.append(action.item)
                continue
            put = born_put(action, lease)
            born.append((put.item, lease))
            written = written if written is not None else list(actions)
            written[index] = put
        return (actions if written is None else written), born, hinted

    async def close(self) -> None:
        await self.inner.close()
