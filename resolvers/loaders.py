"""One DataLoader per access pattern, created per request.

Every storage read a resolver makes goes through here, so one request reads each
distinct key once, concurrent GetItems coalesce into one BatchGetItem, and the
same page of the same query is fetched once however many fields ask for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from strawberry.dataloader import DataLoader

from storage import AccessPattern, Item, Page, Storage
from storage.limits import BATCH_GET_MAX_KEYS
from storage.registry import Operation

__all__ = ["Loaders", "PageRequest"]

Params = tuple[tuple[str, Any], ...]
PageRequest = tuple[Params, int | None, str | None]


def _freeze(params: Mapping[str, Any]) -> Params:
    return tuple(sorted(params.items()))


class Loaders:
    def __init__(self, storage: Storage, tenant: str) -> None:
        self._storage = storage
        self._tenant = tenant
        self._items: dict[str, DataLoader[Params, Item | None]] = {}
        self._pages: dict[str, DataLoader[PageRequest, Page]] = {}

    def _item_loader(self, ap: AccessPattern) -> DataLoader[Params, Item | None]:
        loader = self._items.get(ap.id)
        if loader is None:
            storage = self._storage

            async def load(keys: list[Params]) -> Sequence[Item | None]:
                if len(keys) == 1:
                    return [await storage.get(ap, **dict(keys[0]))]
                return await storage.batch_get(ap, [dict(k) for k in keys])

            # The adapter chunks to 100 itself; batching wider here only delays.
            loader = DataLoader(load, max_batch_size=BATCH_GET_MAX_KEYS * 4)
            self._items[ap.id] = loader
        return loader

    async def item(self, ap: AccessPattern, /, **params: Any) -> Item | None:
        if ap.operation is Operation.QUERY:
            raise TypeError(f"{ap.id} is a query; use Loaders.page")
        return await self._item_loader(ap).load(_freeze(params))

    async def items(
        self, ap: AccessPattern, params: Sequence[Mapping[str, Any]]
    ) -> list[Item | None]:
        results = await self._item_loader(ap).load_many([_freeze(p) for p in params])
        return list(results)

    def cached(self, ap: AccessPattern, /, **params: Any) -> tuple[bool, Item | None]:
        """(True, item) when this request has already read the key, so a
        resolver can answer synchronously: a list of 50 products sharing one
        brand then costs no coroutine per product."""
        future = self._item_loader(ap).cache_map.get(_freeze(params))
        if future is None or not future.done() or future.cancelled() or future.exception():
            return False, None
        item: Item | None = future.result()
        return True, item

    def prime(self, ap: AccessPattern, item: Item, /, **params: Any) -> None:
        """Seed the cache with an item the request already holds (e.g. one it
        just wrote), so resolving its fields reads nothing again."""
        self._item_loader(ap).prime(_freeze(params), item, force=True)

    def forget(self, ap: AccessPattern, /, **params: Any) -> None:
        """Drop a cached item, so a mutation whose write condition failed
        re-reads what changed instead of trusting its earlier read."""
        loader = self._items.get(ap.id)
        key = _freeze(params)
        if loader is not None and loader.cache_map.get(key) is not None:
            loader.clear(key)

    async def page(
        self,
        ap: AccessPattern,
        params: Mapping[str, Any],
        *,
        first: int | None = None,
        after: str | None = None,
    ) -> Page:
        loader = self._pages.get(ap.id)
        if loader is None:
            storage, tenant = self._storage, self._tenant

            async def load(requests: list[PageRequest]) -> Sequence[Page]:
                return await asyncio.gather(
                    *(
                        storage.query(ap, dict(p), tenant=tenant, first=f, after=a)
                        for p, f, a in requests
                    )
                )

            loader = DataLoader(load)
            self._pages[ap.id] = loader
        return await loader.load((_freeze(params), first, after))
