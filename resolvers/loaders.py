"""One DataLoader per access pattern, created per request.

Every storage read a resolver makes goes through here, so one request reads each
distinct key once, concurrent GetItems coalesce into one BatchGetItem, and the
same page of the same query is fetched once however many fields ask for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from strawberry.dataloader import DataLoader

from storage import AccessPattern, Item, Page, Storage
from storage.limits import BATCH_GET_MAX_KEYS
from storage.protocol import kept_reads
from storage.registry import Operation

__all__ = ["Loaders", "PageRequest"]

Params = tuple[tuple[str, Any], ...]
PageRequest = tuple[Params, int | None, str | None]
T = TypeVar("T")


def _freeze(params: Mapping[str, Any]) -> Params:
    if len(params) == 1:
        return tuple(params.items())
    return tuple(sorted(params.items()))


class Loaders:
    def __init__(self, storage: Storage, tenant: str) -> None:
        self._storage = storage
        self._tenant = tenant
        self._kept = kept_reads(storage)
        """The cache's hits, answered before any DataLoader: no future, task
        or loop turn for a read that reaches no store (docs/design.md,
        Storage cache, Hits at once)."""
        self._kept_pages: dict[tuple[str, PageRequest], Page] = {}
        self._items: dict[str, DataLoader[Params, Item | None]] = {}
        self._pages: dict[str, DataLoader[PageRequest, Page]] = {}
        self._held: dict[tuple[str, Params], Item | None] = {}
        """Items the request already holds (``prime``): a plain dict entry
        costs less than a settled future per item, and most are never asked for."""
        self._built: dict[int, tuple[Item, Any]] = {}
        self._pages_held: dict[str, list[tuple[str, str, Sequence[Item]]]] = {}
        """Pages ``hold_page`` was given, not yet entered in ``_held``: a
        projected page of fifty products never asks for one of them, so
        they are entered only when a load of their pattern asks."""
        self.single: frozenset[str] = frozenset()
        """Access patterns that at most one field of the running operation
        loads, outside any list (the compiled plan says which): no other load
        can join theirs in a batch, so they read directly, without the
        DataLoader's future, task and loop turn."""

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
        key = _freeze(params)
        if self._pages_held:
            self._enter_pages(ap.id)
        held = self._held
        if held and (ap.id, key) in held:
            return held[ap.id, key]
        loader = self._items.get(ap.id)
        kept = self._kept
        if kept is not None and (loader is None or loader.cache_map.get(key) is None):
            hit, found = kept.kept_item(ap, params, key)
            if hit:
                held[ap.id, key] = found
                return found
        if ap.id in self.single and (loader is None or loader.cache_map.get(key) is None):
            item = await self._storage.get(ap, **params)
            held[ap.id, key] = item
            return item
        return await self._item_loader(ap).load(key)

    async def items(
        self, ap: AccessPattern, params: Sequence[Mapping[str, Any]]
    ) -> list[Item | None]:
        keys = [_freeze(p) for p in params]
        if self._pages_held:
            self._enter_pages(ap.id)
        held = self._held
        if self._kept is not None:
            self._hold_kept(ap, keys, params)
        wanted = [key for key in keys if (ap.id, key) not in held]
        if not wanted:
            return [held[ap.id, key] for key in keys]
        loaded = dict(zip(wanted, await self._item_loader(ap).load_many(wanted), strict=True))
        return [held[ap.id, key] if (ap.id, key) in held else loaded[key] for key in keys]

    def _hold_kept(
        self, ap: AccessPattern, keys: list[Params], params: Sequence[Mapping[str, Any]]
    ) -> None:
        """Holds each of ``keys`` the cache has and the request has not asked for."""
        kept, held = self._kept, self._held
        assert kept is not None
        cache_map = None if (loader := self._items.get(ap.id)) is None else loader.cache_map
        for key, p in zip(keys, params, strict=True):
            if (ap.id, key) in held or (cache_map is not None and cache_map.get(key) is not None):
                continue
            hit, found = kept.kept_item(ap, p, key)
            if hit:
                held[ap.id, key] = found

    def cached(self, ap: AccessPattern, /, **params: Any) -> tuple[bool, Item | None]:
        """(True, item) when this request has already read the key, so a
        resolver can answer synchronously: a list of 50 products sharing one
        brand then costs no coroutine per product."""
        key = _freeze(params)
        if self._pages_held:
            self._enter_pages(ap.id)
        held = self._held
        if held and (ap.id, key) in held:
            return True, held[ap.id, key]
        loader = self._items.get(ap.id)  # none made only to be asked
        future = None if loader is None else loader.cache_map.get(key)
        if future is None or not future.done() or future.cancelled() or future.exception():
            return False, None
        item: Item | None = future.result()
        # Held from now on: the next of fifty products asking finds it first.
        held[ap.id, key] = item
        return True, item

    def hold_page(
        self, ap: AccessPattern, items: Sequence[Item], /, param: str, attribute: str
    ) -> None:
        """``prime(ap, item, param=item[attribute])`` for each item of a page
        read through an index that projects whole items: later fields of the
        same items in this request read nothing. Entered when a load of
        ``ap`` first asks (``_enter_pages``), as if entered now."""
        self._pages_held.setdefault(ap.id, []).append((param, attribute, items))

    def _enter_pages(self, ap_id: str) -> None:
        pages = self._pages_held.pop(ap_id, None)
        if pages is None:
            return
        loader = self._items.get(ap_id)
        held = self._held
        for param, attribute, items in pages:
            for item in items:
                key = ((param, item[attribute]),)
                held[ap_id, key] = item
                if loader is not None and loader.cache_map.get(key) is not None:
                    loader.clear(key)

    def prime(self, ap: AccessPattern, item: Item, /, **params: Any) -> None:
        """Seed the cache with an item the request already holds (e.g. one it
        just wrote), so resolving its fields reads nothing again."""
        key = _freeze(params)
        if self._pages_held:
            self._enter_pages(ap.id)
        self._held[ap.id, key] = item
        loader = self._items.get(ap.id)
        if loader is not None and loader.cache_map.get(key) is not None:
            loader.clear(key)

    def built(self, item: Item, build: Callable[[Item], T]) -> T:
        """``build(item)``, once per item per request: the fifty products of
        a page share one brand item, and so one ``Brand``."""
        entry = self._built.get(id(item))
        if entry is not None and entry[0] is item:
            value: T = entry[1]
            return value
        value = build(item)
        self._built[id(item)] = (item, value)
        return value

    def forget(self, ap: AccessPattern, /, **params: Any) -> None:
        """Drop a cached item, so a mutation whose write condition failed
        re-reads what changed instead of trusting its earlier read."""
        loader = self._items.get(ap.id)
        key = _freeze(params)
        if self._pages_held:
            self._enter_pages(ap.id)
        self._held.pop((ap.id, key), None)
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
        request = (_freeze(params), first, after)
        kept_pages = self._kept_pages
        if kept_pages:
            page = kept_pages.get((ap.id, request))
            if page is not None:
                return page
        loader = self._pages.get(ap.id)
        kept = self._kept
        if kept is not None and (loader is None or loader.cache_map.get(request) is None):
            page = kept.kept_page(
                ap, params, request[0], tenant=self._tenant, first=first, after=after
            )
            if page is not None:
                kept_pages[ap.id, request] = page
                return page
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
        return await loader.load(request)
