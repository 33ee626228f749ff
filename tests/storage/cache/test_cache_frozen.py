"""A hit hands every caller the same objects, so what the cache keeps is
read-only: a caller that writes into what it read fails and changes nothing
the next reader is served; what a reader derives from a kept page is
charged to the byte cap (docs/design.md, Storage cache)."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
import pytest

from storage import Put, Storage, Update
from storage.access_patterns import BRAND_BY_ID, BRAND_PRODUCTS, PRODUCT_BY_ID
from storage.cache import CachedStorage
from storage.protocol import Page
from storage.trace import Trace, tracing

TENANT = "t"
NESTED = {"tags": ["a", "b"], "address": {"city": "Oslo", "lines": ["1 Main St"]}}


@pytest.fixture
def cache(inner: Storage) -> CachedStorage:
    return CachedStorage(inner, max_bytes=1 << 20, ttl_seconds=60.0)


def brand(brand_id: str, **attributes: object) -> Put:
    key = BRAND_BY_ID.key(brand_id=brand_id)
    return Put({"PK": key.pk, "SK": key.sk, "id": brand_id, **attributes})


def product(product_id: str, brand_id: str, created: str, **attributes: object) -> Put:
    key = PRODUCT_BY_ID.key(product_id=product_id)
    return Put(
        {
            "PK": key.pk,
            "SK": key.sk,
            "GSI1PK": f"BRAND#{brand_id}",
            "GSI1SK": f"PRODUCT#{created}#{product_id}",
            "id": product_id,
            **attributes,
        }
    )


async def calls(read: Awaitable[object]) -> int:
    trace = Trace()
    with tracing(trace):
        await read
    return trace.storage_calls


async def _page(cache: Storage, brand_id: str = "b") -> Page:
    return await cache.query(BRAND_PRODUCTS, {"brand_id": brand_id}, tenant=TENANT, first=2)


MUTATIONS: list[tuple[str, Callable[[dict[str, Any]], object]]] = [
    ("set", lambda item: item.__setitem__("name", "Mallory")),
    ("delete", lambda item: item.__delitem__("name")),
    ("update", lambda item: item.update(name="Mallory")),
    ("merge", lambda item: item.__ior__({"name": "Mallory"})),
    ("pop", lambda item: item.pop("name")),
    ("popitem", lambda item: item.popitem()),
    ("setdefault", lambda item: item.setdefault("extra", 1)),
    ("clear", lambda item: item.clear()),
    ("nested list", lambda item: item["tags"].append("c")),
    ("nested list slot", lambda item: item["tags"].__setitem__(0, "z")),
    ("nested list sort", lambda item: item["tags"].sort(reverse=True)),
    ("nested map", lambda item: item["address"].__setitem__("city", "Bergen")),
    ("map in map", lambda item: item["address"]["lines"].extend(["2"])),
]


@pytest.mark.parametrize(("name", "mutate"), MUTATIONS, ids=[n for n, _ in MUTATIONS])
async def test_a_caller_mutating_a_hit_cannot_change_the_cache(
    cache: CachedStorage, name: str, mutate: Callable[[dict[str, Any]], object]
) -> None:
    await cache.transact_write([brand("b1", name="One", **NESTED)])
    missed = await cache.get(BRAND_BY_ID, brand_id="b1")
    assert missed is not None
    mutate(missed)  # the miss's caller holds the store's own object, not the entry
    hit = await cache.get(BRAND_BY_ID, brand_id="b1")
    assert hit is not None and hit is not missed
    expected = {"PK": "BRAND#b1", "SK": "PROFILE", "id": "b1", "name": "One", **NESTED}
    assert hit == expected
    with pytest.raises(TypeError, match="read-only"):
        mutate(hit)
    again = await cache.get(BRAND_BY_ID, brand_id="b1")
    assert again is hit and again == expected
    assert cache.stats.hits["AP01"] == 2


async def test_a_frozen_item_reads_copies_and_encodes_as_a_dict(cache: CachedStorage) -> None:
    await cache.transact_write([brand("b2", name="Two", **NESTED)])
    await cache.get(BRAND_BY_ID, brand_id="b2")
    hit = await cache.get(BRAND_BY_ID, brand_id="b2")
    assert isinstance(hit, dict) and isinstance(hit["tags"], list)
    assert orjson.loads(orjson.dumps(hit)) == hit
    for thawed in (
        dict(hit),
        {**hit},
        copy.copy(hit),
        copy.deepcopy(hit),
        pickle.loads(pickle.dumps(hit)),
    ):
        thawed["name"] = "Mine"  # a copy is the caller's own
        assert thawed["name"] == "Mine"
    deep = copy.deepcopy(hit)
    deep["tags"].append("c")
    deep["address"]["city"] = "Bergen"
    assert hit == {"PK": "BRAND#b2", "SK": "PROFILE", "id": "b2", "name": "Two", **NESTED}


async def test_a_batch_get_hit_is_frozen(cache: CachedStorage) -> None:
    await cache.transact_write([brand("c1", name="1")])
    await cache.batch_get(BRAND_BY_ID, [{"brand_id": "c1"}])
    [hit] = await cache.batch_get(BRAND_BY_ID, [{"brand_id": "c1"}])
    assert hit is not None
    with pytest.raises(TypeError):
        hit["name"] = "2"
    assert (await cache.get(BRAND_BY_ID, brand_id="c1")) == {
        "PK": "BRAND#c1", "SK": "PROFILE", "id": "c1", "name": "1"
    }  # fmt: skip


async def test_a_caller_mutating_a_page_hit_cannot_change_the_cache(cache: CachedStorage) -> None:
    writes = [product(f"p{i}", "b", f"2026-01-0{i}", name=f"P{i}") for i in range(1, 4)]
    await cache.transact_write(writes)
    missed = await _page(cache)
    missed.items.append(missed.items[0])  # the store's own page: changes nothing kept
    missed.items[0]["name"] = "Mallory"
    hit = await _page(cache)
    assert hit is not missed
    assert [item["name"] for item in hit.items] == ["P3", "P2"] and hit.has_next_page
    changes: list[Callable[[], object]] = [
        lambda: hit.items.append(hit.items[0]),
        lambda: hit.items.pop(),
        lambda: hit.items.__setitem__(0, {}),
        lambda: hit.items[0].__setitem__("name", "Mallory"),
        lambda: setattr(hit, "items", []),
        lambda: setattr(hit, "has_next_page", False),
        lambda: setattr(hit, "beyond", None),
    ]
    for change in changes:
        with pytest.raises(TypeError, match="read-only"):
            change()
    assert hit.beyond is not None
    with pytest.raises(TypeError):
        hit.beyond["name"] = "Mallory"
    again = await _page(cache)
    assert again is hit
    assert [item["name"] for item in again.items] == ["P3", "P2"] and again.has_next_page
    assert await calls(_page(cache)) == 0


async def test_what_a_reader_derives_from_a_kept_page_is_charged(cache: CachedStorage) -> None:
    await cache.transact_write([product(f"p{i}", "b", f"2026-01-0{i}") for i in range(1, 4)])
    await _page(cache)
    page = await _page(cache)
    kept = cache.entries.bytes
    page.derive("edges", 1000)
    assert cache.entries.bytes == kept + 1000 and page.derived == "edges"
    page.derive("smaller", 400)
    assert cache.entries.bytes == kept + 400
    # Past the cap, the page goes as any entry would.
    cache.entries.max_bytes = cache.entries.bytes + 100
    page.derive("larger", 400 + 200)
    assert len(cache.entries) == 0 and cache.entries.bytes == 0
    assert await calls(_page(cache)) == 1  # read again, kept again, uncharged
    fresh = await _page(cache)
    assert fresh is not page and fresh.derived is None
    kept = cache.entries.bytes
    page.derive("stale", 5000)  # a page no longer kept is no longer counted
    assert cache.entries.bytes == kept


async def test_a_dropped_page_leaves_the_cap_its_derived_bytes(cache: CachedStorage) -> None:
    await cache.transact_write([product("p1", "b", "2026-01-01"), brand("x", name="X")])
    await cache.get(BRAND_BY_ID, brand_id="x")
    only_brand = cache.entries.bytes
    await _page(cache)
    page = await _page(cache)
    page.derive("edges", 1000)
    await cache.transact_write([Update(product("p1", "b", "2026-01-01").key, set={"n": 1})])
    assert cache.entries.bytes == only_brand
    await cache.transact_write([brand("x")])
    assert cache.entries.bytes == 0
