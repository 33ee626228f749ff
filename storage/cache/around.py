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

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..forwarding import Forwarding
from ..protocol import Storage
from ..writes import WriteAction

if TYPE_CHECKING:
    from .storage import CachedStorage

__all__ = ["ReadsAround"]


class ReadsAround(Forwarding):
    def __init__(self, cache: CachedStorage) -> None:
        self._cache = cache
        self.backend = cache.backend

    @property
    def inner(self) -> Storage:  # type: ignore[override]  # read-only: it follows the cache
        """The store under the cache, as it is now."""
        return self._cache.inner

    async def transact_write(self, actions: Sequence[WriteAction]) -> None:
        await self._cache.transact_write(actions)

    async def close(self) -> None:
        """The cache's owner closes it."""
