"""The storage cache's hits reach a request at once, before any DataLoader:
answered without suspending, counted and spent once per key per request,
while misses still batch (docs/design.md, Storage cache, Hits at once)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Coroutine
from typing import Any, TypeVar

import pytest

from resolvers.loaders import Loaders
from storage import Put, Storage
from storage.access_patterns import BRAND_PRODUCTS, PRODUCT_BY_ID
from storage.cache import CachedStorage
from storage.protocol import kept_reads
from storage.sqlite import open_sqlite
from storage.trace import tracing

TENANT = "t"
AP = PRODUCT_BY_ID.id
T = TypeVar("T")


def _product(product_id: str) -> dict[str, Any]:
    key = PRODUCT_BY_ID.key(product_id=product_id)
    return {
        "PK": key.pk,
        "SK": key.sk,
        "GSI1PK": "BRAND#b",
        "GSI1SK": f"PRODUCT#2026-01-01#{product_id}",
        "id": product_id,
    }


@pytest.fixture
async def cache() -> AsyncIterator[CachedStorage]:
    inner = await open_sqlite(":memory:", cursor_key=bytes(range(32)))
    await inner.transact_write([Put(_product(p)) for p in ("P1", "P2", "P3")])
    cache = CachedStorage(inner, max_bytes=1 << 20, ttl_seconds=60.0)
    yield cache
    await cache.close()


def at_once(coroutine: Coroutine[Any, Any, T]) -> T:
    """The coroutine's answer, which it must give without suspending."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        answer: T = done.value
        return answer
    coroutine.close()
    raise AssertionError("suspended: the read went to a DataLoader or the store")


async def test_a_hit_is_answered_without_suspending_and_counted_once(
    cache: CachedStorage,
) -> None:
    kept = await cache.get(PRODUCT_BY_ID, product_id="P1")
    kept = await cache.get(PRODUCT_BY_ID, product_id="P1")  # the kept copy
    hits = cache.stats.hits[AP]
    loaders = Loaders(cache, TENANT)
    with tracing() as trace:
        assert at_once(loaders.item(PRODUCT_BY_ID, product_id="P1")) is kept
        assert at_once(loaders.item(PRODUCT_BY_ID, product_id="P1")) is kept
        assert at_once(loaders.items(PRODUCT_BY_ID, [{"product_id": "P1"}])) == [kept]
        assert loaders.cached(PRODUCT_BY_ID, product_id="P1") == (True, kept)
    assert trace.storage_calls == 0
    assert cache.stats.hits[AP] == hits + 1  # the request holds it after its first hit


async def test_a_miss_still_goes_to_the_loader_and_batches(cache: CachedStorage) -> None:
    await cache.get(PRODUCT_BY_ID, product_id="P1")
    loaders = Loaders(cache, TENANT)
    with tracing() as trace:
        items = await loaders.items(
            PRODUCT_BY_ID, [{"product_id": p} for p in ("P1", "P2", "P3", "P1")]
        )
    assert [item["id"] if item else None for item in items] == ["P1", "P2", "P3", "P1"]
    assert [call.items for call in trace.calls] == [2]  # P2 and P3 in one batch
    hits = cache.stats.hits[AP]
    # Read by this request's loader, the key is answered by it, not hit again.
    assert (await loaders.item(PRODUCT_BY_ID, product_id="P2"))["id"] == "P2"  # type: ignore[index]
    assert cache.stats.hits[AP] == hits
    with pytest.raises(AssertionError, match="suspended"):  # a positive control of at_once
        at_once(Loaders(cache, TENANT).item(PRODUCT_BY_ID, product_id="P4"))


async def test_a_kept_page_is_answered_at_once_and_counted_once(cache: CachedStorage) -> None:
    params = {"brand_id": "b"}
    await cache.query(BRAND_PRODUCTS, params, tenant=TENANT, first=2)
    kept = await cache.query(BRAND_PRODUCTS, params, tenant=TENANT, first=2)
    hits = cache.stats.hits[BRAND_PRODUCTS.id]
    loaders = Loaders(cache, TENANT)
    with tracing() as trace:
        assert at_once(loaders.page(BRAND_PRODUCTS, params, first=2)) is kept
        assert at_once(loaders.page(BRAND_PRODUCTS, params, first=2)) is kept
    assert trace.storage_calls == 0
    assert cache.stats.hits[BRAND_PRODUCTS.id] == hits + 1
    other = loaders.page(BRAND_PRODUCTS, params, first=3)  # not kept: the loader reads it
    with pytest.raises(AssertionError, match="suspended"):
        at_once(other)


async def test_a_store_without_a_cache_has_no_hits_at_once(cache: CachedStorage) -> None:
    assert kept_reads(cache) is cache
    assert kept_reads(cache.inner) is None
    assert kept_reads(cache.reads_around()) is None  # the relay's reads pass the cache
    loaders: Storage = cache.inner
    with pytest.raises(AssertionError, match="suspended"):
        at_once(Loaders(loaders, TENANT).item(PRODUCT_BY_ID, product_id="P1"))


async def test_a_page_kept_for_one_tenant_is_not_anothers(cache: CachedStorage) -> None:
    params = {"brand_id": "b"}
    await cache.query(BRAND_PRODUCTS, params, tenant="A", first=2)
    assert at_once(Loaders(cache, "A").page(BRAND_PRODUCTS, params, first=2)) is not None
    with pytest.raises(AssertionError, match="suspended"):
        at_once(Loaders(cache, "B").page(BRAND_PRODUCTS, params, first=2))


async def test_the_keys_remembered_for_hits_are_bounded(cache: CachedStorage) -> None:
    bound = cache._keys_max
    for number in range(bound + 10):
        cache.kept_item(PRODUCT_BY_ID, {"product_id": f"X{number}"}, (("product_id", number),))
    assert 0 < len(cache._keys) <= bound
    # Remembered or not, each name still finds its own key.
    await cache.get(PRODUCT_BY_ID, product_id="P3")
    hit, item = cache.kept_item(PRODUCT_BY_ID, {"product_id": "P3"}, "P3")
    assert hit and item is not None and item["id"] == "P3"
    assert cache.kept_item(PRODUCT_BY_ID, {"product_id": "P2"}, "P2") == (False, None)
