"""A store stand-in whose writes commit and then wait: a write committed
whose caller has not heard so yet (docs/design.md, Storage cache, The
watermark)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from storage import Item, Page, Storage, WriteAction
from storage.registry import AccessPattern

__all__ = ["HeldWrites"]


class HeldWrites:
    """Commits each write through ``inner``, then answers only once ``release``
    is set (set from the start unless ``held``)."""

    def __init__(self, inner: Storage, *, held: bool = True) -> None:
        self.inner = inner
        self.backend = inner.backend
        self.committed = asyncio.Event()
        self.release = asyncio.Event()
        if not held:
            self.release.set()

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
        self.committed.set()
        await self.release.wait()

    async def close(self) -> None:
        await self.inner.close()
