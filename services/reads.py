"""``Reads`` straight from storage, for jobs that run outside a request.

A batch job (``proofgate reconcile``) reads each key once anyway, so it needs
neither the per-request cache nor the coalescing of the GraphQL layer's
DataLoaders; ``batch_get`` still chunks and retries in the adapter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from storage import AccessPattern, Item, Page, Storage

__all__ = ["StorageReads"]


class StorageReads:
    def __init__(self, storage: Storage, tenant: str) -> None:
        self._storage = storage
        self._tenant = tenant

    async def item(self, ap: AccessPattern, /, **params: Any) -> Item | None:
        return await self._storage.get(ap, **params)

    async def items(
        self, ap: AccessPattern, params: Sequence[Mapping[str, Any]]
    ) -> list[Item | None]:
        return await self._storage.batch_get(ap, params)

    async def page(
        self,
        ap: AccessPattern,
        params: Mapping[str, Any],
        *,
        first: int | None = None,
        after: str | None = None,
    ) -> Page:
        return await self._storage.query(ap, params, tenant=self._tenant, first=first, after=after)

    def prime(self, ap: AccessPattern, item: Item, /, **params: Any) -> None:
        """Nothing is cached, so there is nothing to seed."""

    def forget(self, ap: AccessPattern, /, **params: Any) -> None:
        """Nothing is cached, so every read is already fresh."""
