"""A store that passes every call to another: the base of a wrapper that
changes one or two of them (writes that tell a relay, reads that go around a
cache, a test's stand-in that fails on cue) and forwards the rest unchanged.

``inner`` is read at each call, never kept: a wrapper whose ``inner`` is a
property (``ReadsAround``: the store under a cache, which a test may swap)
follows it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .protocol import Page, Storage
from .registry import AccessPattern
from .values import Item
from .writes import WriteAction

__all__ = ["Forwarding"]


class Forwarding:
    inner: Storage
    backend: str

    def __init__(self, inner: Storage) -> None:
        self.inner = inner
        self.backend = inner.backend

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

    async def close(self) -> None:
        await self.inner.close()
