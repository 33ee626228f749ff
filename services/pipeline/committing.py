"""The store as commands see it while a pipeline runs: it tells the relay about
outbox items the moment the transaction that wrote them commits.

Without this the relay would learn of a new item only at its next poll; with
it, a scan's alerts are raised a few milliseconds after the scan commits, and
no claim is attempted before the item exists.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from storage import AccessPattern, Item, Page, Put, Storage, WriteAction

__all__ = ["CommittingStorage"]

_OUTBOX_ENTITY = "OutboxItem"


class CommittingStorage:
    """A ``Storage`` that calls ``on_outbox(item)`` for every outbox item a
    successful ``transact_write`` created."""

    def __init__(self, inner: Storage, on_outbox: Callable[[Item], None]) -> None:
        self.inner = inner
        self.backend = inner.backend
        self._on_outbox = on_outbox

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
        await self.inner.transact_write(actions)
        for action in actions:
            if isinstance(action, Put) and action.item.get("entity") == _OUTBOX_ENTITY:
                self._on_outbox(action.item)

    async def close(self) -> None:
        await self.inner.close()
