"""A view of a cached store whose reads go around the cache and whose writes
go through it, for a reader that reads what a write just changed.

The relay handles each scan right after the scan's transaction committed:
it reads the product's scans (AP10) and day counters (AP27), which that
very transaction wrote, so through the cache each read would miss and keep
an entry the product's next scan drops, never served. Around the cache it
costs what an uncached read does; its writes still drop what they change
everywhere (docs/design.md, Storage cache).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..protocol import Page
from ..registry import AccessPattern
from ..values import Item
from ..writes import WriteAction

if TYPE_CHECKING:
    from .storage import CachedStorage

__all__ = ["ReadsAround"]


class ReadsAround:
    def __init__(self, cache: CachedStorage) -> None:
        self._cache = cache
        self._inner = cache.inner
        self.backend = cache.backend

    async def get(self, ap: AccessPattern, /, **params: Any) -> Item | None:
        return await self._inner.get(ap, **params)

    async def batch_get(
        self, ap: AccessPattern, params: Sequence[Mapping[str, Any]]
    ) -> list[Item | None]:
        return await self._inner.batch_get(ap, params)

    async def query(
        self,
        ap: AccessPattern,
        params: Mapping[str, Any],
        *,
        tenant: str,
        first: int | None = None,
        after: str | None = None,
    ) -> Page:
        return await self._inner.query(ap, params, tenant=tenant, first=first, after=after)

    async def transact_write(self, actions: Sequence[WriteAction]) -> None:
        await self._cache.transact_write(actions)

    async def close(self) -> None:
        """The cache's owner closes it."""
