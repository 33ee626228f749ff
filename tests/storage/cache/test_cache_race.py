"""A read that missed before a write committed must not keep its answer
after the write's invalidation (docs/design.md, Storage cache).

The race is forced, not hoped for: a stand-in storage holds the read's
answer (already read from the store) until the write has committed and
invalidated, then hands it over.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from storage import Item, Page, Put, Storage, Update, WriteAction
from storage.access_patterns import BRAND_BY_ID, BRAND_PRODUCTS, PRODUCT_BY_ID
from storage.cache import CachedStorage
from storage.cache.generations import Generations
from storage.registry import AccessPattern

TENANT = "t"


class HeldReads:
    """Reads through ``inner``, then waits for ``release`` before answering."""

    def __init__(self, inner: Storage) -> None:
        self.inner = inner
        self.backend = inner.backend
        self.read_done = asyncio.Event()
        self.release = asyncio.Event()

    async def _hold(self) -> None:
        self.read_done.set()
        await self.release.wait()

    async def get(self, ap: AccessPattern, /, **params: Any) -> Item | None:
        item = await self.inner.get(ap, **params)
        await self._hold()
        return item

    async def batch_get(
        self, ap: AccessPattern, params: Sequence[Mapping[str, Any]]
    ) -> list[Item | None]:
        items = await self.inner.batch_get(ap, params)
        await self._hold()
        return items

    async def query(
        self,
        ap: AccessPattern,
        params: Mapping[str, Any],
        *,
        tenant: str,
        first: int | None = None,
        after: str | None = None,
    ) -> Page:
        page = await self.inner.query(ap, params, tenant=tenant, first=first, after=after)
        await self._hold()
        return page

    async def transact_write(self, actions: Sequence[WriteAction]) -> None:
        await self.inner.transact_write(actions)

    async def close(self) -> None:
        await self.inner.close()


class Forgetful(Generations):
    """The planted fault: generations that never see a write."""

    def unchanged(self, start: int, slots: Any) -> bool:
        return True


def _product(product_id: str, name: str) -> Put:
    key = PRODUCT_BY_ID.key(product_id=product_id)
    return Put(
        {
            "PK": key.pk,
            "SK": key.sk,
            "GSI1PK": "BRAND#r",
            "GSI1SK": f"PRODUCT#{product_id}",
            "name": name,
        }
    )


async def _race_get(cache: CachedStorage, held: HeldReads) -> str:
    """Returns the name a fresh read gets after the race."""
    key = BRAND_BY_ID.key(brand_id="r")
    await cache.transact_write([Put({"PK": key.pk, "SK": key.sk, "name": "old"})])
    read = asyncio.create_task(cache.get(BRAND_BY_ID, brand_id="r"))
    await held.read_done.wait()  # the old item is read, not yet answered
    await cache.transact_write([Update(key, set={"name": "new"})])
    held.release.set()
    assert (await read)["name"] == "old"  # type: ignore[index]  # concurrent: either is right
    item = await cache.get(BRAND_BY_ID, brand_id="r")
    assert item is not None
    return str(item["name"])


async def _race_page(cache: CachedStorage, held: HeldReads) -> list[str]:
    await cache.transact_write([_product("a", "A")])
    read = asyncio.create_task(cache.query(BRAND_PRODUCTS, {"brand_id": "r"}, tenant=TENANT))
    await held.read_done.wait()
    await cache.transact_write([_product("b", "B")])
    held.release.set()
    assert len(await read) == 1
    page = await cache.query(BRAND_PRODUCTS, {"brand_id": "r"}, tenant=TENANT)
    return [item["name"] for item in page.items]


@pytest.mark.parametrize("planted", [False, True], ids=["generations", "planted-fault"])
async def test_a_read_overtaken_by_a_write_keeps_nothing(inner: Storage, planted: bool) -> None:
    held = HeldReads(inner)
    cache = CachedStorage(held, max_bytes=1 << 20, ttl_seconds=60.0)
    if planted:
        cache.generations = Forgetful()
    name = await _race_get(cache, held)
    assert name == ("old" if planted else "new")


@pytest.mark.parametrize("planted", [False, True], ids=["generations", "planted-fault"])
async def test_a_page_overtaken_by_an_insert_keeps_nothing(inner: Storage, planted: bool) -> None:
    held = HeldReads(inner)
    cache = CachedStorage(held, max_bytes=1 << 20, ttl_seconds=60.0)
    if planted:
        cache.generations = Forgetful()
    names = await _race_page(cache, held)
    assert names == (["A"] if planted else ["B", "A"])


async def test_a_flush_during_a_read_keeps_nothing(inner: Storage) -> None:
    held = HeldReads(inner)
    cache = CachedStorage(held, max_bytes=1 << 20, ttl_seconds=60.0)
    read = asyncio.create_task(cache.get(BRAND_BY_ID, brand_id="f"))
    await held.read_done.wait()
    cache.flush()
    held.release.set()
    await read
    assert len(cache.entries) == 0
    await cache.get(BRAND_BY_ID, brand_id="f")
    assert len(cache.entries) == 1  # positive control: an undisturbed read is kept


class QueuedWrites(HeldReads):
    """Writes wait for ``gate`` and then commit even if their caller is gone,
    as a write queued for a group commit does."""

    def __init__(self, inner: Storage) -> None:
        super().__init__(inner)
        self.release.set()  # reads pass
        self.gate = asyncio.Event()
        self.pending: asyncio.Future[None] | None = None

    async def _commit(self, actions: Sequence[WriteAction]) -> None:
        await self.gate.wait()
        await self.inner.transact_write(actions)

    async def transact_write(self, actions: Sequence[WriteAction]) -> None:
        self.pending = asyncio.ensure_future(self._commit(actions))
        await asyncio.shield(self.pending)


async def test_a_cancelled_write_is_dropped_again_once_it_must_have_ended(
    inner: Storage,
) -> None:
    queued = QueuedWrites(inner)
    cache = CachedStorage(queued, max_bytes=1 << 20, ttl_seconds=60.0, doubt_seconds=0.05)
    key = BRAND_BY_ID.key(brand_id="c")
    await inner.transact_write([Put({"PK": key.pk, "SK": key.sk, "name": "old"})])
    write = asyncio.create_task(cache.transact_write([Update(key, set={"name": "new"})]))
    await asyncio.sleep(0)  # the write is queued
    write.cancel()
    with pytest.raises(asyncio.CancelledError):
        await write
    assert (await cache.get(BRAND_BY_ID, brand_id="c")) == {
        "PK": key.pk,
        "SK": key.sk,
        "name": "old",
    }
    queued.gate.set()
    assert queued.pending is not None
    await queued.pending  # committed after its caller was cancelled
    async with asyncio.timeout(5):
        while cache.stats.invalidations < 2:  # the second drop, doubt_seconds later
            await asyncio.sleep(0.01)
    item = await cache.get(BRAND_BY_ID, brand_id="c")
    assert item is not None and item["name"] == "new"
