"""CachedStorage over the embedded store: what it serves, what it passes,
what each write drops (docs/design.md, Storage cache)."""

from __future__ import annotations

from collections.abc import Awaitable
from decimal import Decimal

import pytest

from domain.errors import ConditionFailed, LimitExceeded
from storage import ItemExists, Put, Storage, Update
from storage.access_patterns import (
    API_KEY_BY_HASH,
    BRAND_BY_ID,
    BRAND_PRODUCTS,
    LEDGER_BALANCE,
    PRODUCT_BY_ID,
    PROVENANCE_CHAIN,
)
from storage.cache import CachedStorage, Invalidation, Rule, rule_of
from storage.keys import Key
from storage.trace import Trace, tracing
from storage.writes import Delete

TENANT = "t"
NOW = 1_800_000_000.0


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> float:
        return self.now


class AlwaysHeard:
    """A channel that has heard everything: freshness patterns are served."""

    def trusted(self) -> bool:
        return True

    def heard_through(self) -> float:
        return float("inf")


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def cache(inner: Storage, clock: Clock) -> CachedStorage:
    return CachedStorage(inner, max_bytes=1 << 20, ttl_seconds=60.0, clock=clock)


def product(product_id: str, brand: str, created: str, **attributes: object) -> Put:
    key = PRODUCT_BY_ID.key(product_id=product_id)
    return Put(
        {
            "PK": key.pk,
            "SK": key.sk,
            "GSI1PK": f"BRAND#{brand}",
            "GSI1SK": f"PRODUCT#{created}#{product_id}",
            "id": product_id,
            **attributes,
        }
    )


def brand(brand_id: str, **attributes: object) -> Put:
    key = BRAND_BY_ID.key(brand_id=brand_id)
    return Put({"PK": key.pk, "SK": key.sk, "id": brand_id, **attributes})


async def calls(read: Awaitable[object]) -> int:
    trace = Trace()
    with tracing(trace):
        await read
    return trace.storage_calls


async def page_ids(storage: Storage, brand_id: str, first: int = 10) -> list[str]:
    page = await storage.query(BRAND_PRODUCTS, {"brand_id": brand_id}, tenant=TENANT, first=first)
    return [item["id"] for item in page.items]


async def test_a_repeated_get_reads_the_store_once(cache: CachedStorage) -> None:
    await cache.transact_write([brand("b1", name="One")])
    assert await calls(cache.get(BRAND_BY_ID, brand_id="b1")) == 1
    assert await calls(cache.get(BRAND_BY_ID, brand_id="b1")) == 0
    assert cache.stats.hits["AP01"] == 1 and cache.stats.misses["AP01"] == 1


async def test_a_missing_item_is_kept_and_dropped_when_written(cache: CachedStorage) -> None:
    assert await cache.get(BRAND_BY_ID, brand_id="nope") is None
    assert await calls(cache.get(BRAND_BY_ID, brand_id="nope")) == 0
    await cache.transact_write([brand("nope", name="Now")])
    item = await cache.get(BRAND_BY_ID, brand_id="nope")
    assert item is not None and item["name"] == "Now"


async def test_an_update_drops_the_item(cache: CachedStorage) -> None:
    await cache.transact_write([brand("b2", name="Old")])
    await cache.get(BRAND_BY_ID, brand_id="b2")
    await cache.transact_write([Update(BRAND_BY_ID.key(brand_id="b2"), set={"name": "New"})])
    item = await cache.get(BRAND_BY_ID, brand_id="b2")
    assert item is not None and item["name"] == "New"


async def test_a_batch_get_serves_what_it_holds_and_reads_the_rest(cache: CachedStorage) -> None:
    await cache.transact_write([brand("c1", name="1"), brand("c2", name="2")])
    await cache.get(BRAND_BY_ID, brand_id="c1")
    trace = Trace()
    with tracing(trace):
        items = await cache.batch_get(
            BRAND_BY_ID, [{"brand_id": "c1"}, {"brand_id": "c2"}, {"brand_id": "c1"}]
        )
    assert [i["name"] if i else None for i in items] == ["1", "2", "1"]
    assert [c.items for c in trace.calls] == [1]  # only c2 was read
    assert await calls(cache.batch_get(BRAND_BY_ID, [{"brand_id": "c2"}])) == 0


async def test_an_insert_drops_its_brands_pages_and_no_other(cache: CachedStorage) -> None:
    await cache.transact_write([product("p1", "x", "2026-01-01"), product("q1", "y", "2026-01-01")])
    assert await page_ids(cache, "x") == ["p1"]
    assert await page_ids(cache, "y") == ["q1"]
    await cache.transact_write([product("p2", "x", "2026-01-02")])
    assert await calls(page_ids(cache, "y")) == 0  # another brand's page stays
    trace = Trace()
    with tracing(trace):
        assert await page_ids(cache, "x") == ["p2", "p1"]
    assert trace.storage_calls == 1


async def test_a_change_outside_a_pages_window_leaves_it(cache: CachedStorage) -> None:
    await cache.transact_write([product(f"w{i}", "z", f"2026-01-0{i}") for i in range(1, 5)])
    assert await page_ids(cache, "z", first=2) == ["w4", "w3"]
    # w1 is neither on the page nor the item read beyond it (w2).
    await cache.transact_write([Update(PRODUCT_BY_ID.key(product_id="w1"), add={"scans": 1})])
    assert await calls(page_ids(cache, "z", first=2)) == 0
    # w2 decided hasNextPage: deleting it drops the page.
    await cache.transact_write([Delete(PRODUCT_BY_ID.key(product_id="w2"))])
    assert await calls(page_ids(cache, "z", first=2)) == 1


async def test_a_moved_sort_key_drops_the_pages_it_can_enter(cache: CachedStorage) -> None:
    await cache.transact_write(
        [
            product("m1", "m", "2026-01-01"),
            product("m2", "m", "2026-01-02"),
            product("m3", "m", "2026-01-03"),
        ]
    )
    assert await page_ids(cache, "m", first=1) == ["m3"]
    # m1 is in no entry: its partition is unknown here, so every GSI1 page goes.
    await cache.transact_write(
        [Update(PRODUCT_BY_ID.key(product_id="m1"), set={"GSI1SK": "PRODUCT#2026-02-01#m1"})]
    )
    assert await page_ids(cache, "m", first=1) == ["m1"]


async def test_a_failed_condition_drops_nothing(cache: CachedStorage) -> None:
    await cache.transact_write([brand("f1", name="F")])
    await cache.get(BRAND_BY_ID, brand_id="f1")
    with pytest.raises(ConditionFailed):
        await cache.transact_write(
            [Update(BRAND_BY_ID.key(brand_id="f2"), set={"name": "G"}, condition=ItemExists())]
        )
    assert cache.stats.invalidations == 1  # the Put's, not the failure's
    assert await calls(cache.get(BRAND_BY_ID, brand_id="f1")) == 0


async def test_strong_and_balance_patterns_pass_through(cache: CachedStorage) -> None:
    assert rule_of(API_KEY_BY_HASH) is Rule.STRONG
    assert rule_of(LEDGER_BALANCE) is Rule.BALANCE
    for _ in range(2):
        assert await calls(cache.get(API_KEY_BY_HASH, key_hash="h")) == 1
        assert await calls(cache.get(LEDGER_BALANCE, brand_id="b", currency="EUR")) == 1
    assert len(cache.entries) == 0


async def test_a_freshness_pattern_is_served_only_when_heard(inner: Storage, clock: Clock) -> None:
    await inner.transact_write([product("v1", "v", "2026-01-01")])
    local = CachedStorage(inner, max_bytes=1 << 20, ttl_seconds=60.0, clock=clock)
    heard = CachedStorage(
        inner, max_bytes=1 << 20, ttl_seconds=60.0, clock=clock, freshness=AlwaysHeard()
    )

    async def record(storage: Storage) -> None:
        await storage.query(PROVENANCE_CHAIN, {"product_id": "v1"}, tenant=TENANT)

    for storage, second in ((local, 1), (heard, 0)):
        assert await calls(record(storage)) == 1
        assert await calls(record(storage)) == second
    assert len(local.entries) == 0  # never servable here: nothing kept
    assert len(heard.entries) == 1


async def test_an_entry_dies_with_its_ttl_and_before_its_items_expiry(
    cache: CachedStorage, clock: Clock
) -> None:
    await cache.transact_write([brand("e1"), brand("e2", expiresAt=Decimal(int(NOW) + 30))])
    await cache.get(BRAND_BY_ID, brand_id="e1")
    await cache.get(BRAND_BY_ID, brand_id="e2")
    clock.now += 26  # within 5 s of e2's expiry
    assert await calls(cache.get(BRAND_BY_ID, brand_id="e1")) == 0
    assert await calls(cache.get(BRAND_BY_ID, brand_id="e2")) == 1
    clock.now += 60
    assert await calls(cache.get(BRAND_BY_ID, brand_id="e1")) == 1
    assert cache.stats.evictions[("AP01", "expired")] == 2


async def test_the_byte_cap_evicts_the_least_recently_used(inner: Storage, clock: Clock) -> None:
    cache = CachedStorage(inner, max_bytes=1000, ttl_seconds=60.0, clock=clock)
    await cache.transact_write([brand(f"l{i}", pad="x" * 200) for i in range(4)])
    for i in range(4):
        await cache.get(BRAND_BY_ID, brand_id=f"l{i}")
    assert cache.entries.bytes <= 1000
    assert cache.stats.evictions[("AP01", "capacity")] >= 1
    assert await calls(cache.get(BRAND_BY_ID, brand_id="l3")) == 0
    assert await calls(cache.get(BRAND_BY_ID, brand_id="l0")) == 1


async def test_bad_input_is_refused_as_the_store_refuses_it(cache: CachedStorage) -> None:
    for _ in range(2):
        with pytest.raises(LimitExceeded):
            await cache.query(BRAND_PRODUCTS, {"brand_id": "x"}, tenant=TENANT, first=10_000)
    with pytest.raises(LimitExceeded):
        await cache.query(BRAND_PRODUCTS, {"brand_id": "x"}, tenant=TENANT, first=True)


async def test_a_flush_drops_everything(cache: CachedStorage) -> None:
    await cache.get(BRAND_BY_ID, brand_id="g")
    cache.flush()
    assert len(cache.entries) == 0
    assert await calls(cache.get(BRAND_BY_ID, brand_id="g")) == 1


async def test_listeners_hear_each_writes_keys(cache: CachedStorage) -> None:
    heard: list[Invalidation] = []
    cache.on_invalidation(heard.append)
    await cache.transact_write([product("h1", "h", "2026-01-01")])
    assert heard[0].keys == {Key("PRODUCT#h1", "META")}
    assert {(e.table_index.value, e.partition) for e in heard[0].entered} == {
        ("TABLE", "PRODUCT#h1"),
        ("GSI1", "BRAND#h"),
    }


async def test_a_move_outside_a_pages_range_leaves_it(cache: CachedStorage) -> None:
    """An alert's late-commit move sets its GSI1 sort key alone; the products
    page of the same brand partition cannot gain it."""
    await cache.transact_write([product("a1", "al", "2026-01-01")])
    assert await page_ids(cache, "al") == ["a1"]
    alert = Key("THREAT#al#2026-01", "ALERT#x")
    await cache.transact_write([Update(alert, set={"GSI1SK": "THREAT#2026-01-02#x"})])
    assert await calls(page_ids(cache, "al")) == 0


class Switchable:
    """A channel that may go deaf, as a broker does when it goes down."""

    def __init__(self) -> None:
        self.up = True

    def trusted(self) -> bool:
        return self.up

    def heard_through(self) -> float:
        return float("-inf")


async def test_while_the_gate_is_shut_reads_pass_and_nothing_is_kept(
    inner: Storage, clock: Clock
) -> None:
    gate = Switchable()
    cache = CachedStorage(inner, max_bytes=1 << 20, ttl_seconds=60.0, clock=clock, freshness=gate)
    await cache.get(BRAND_BY_ID, brand_id="s")
    assert await calls(cache.get(BRAND_BY_ID, brand_id="s")) == 0  # positive control
    gate.up = False
    for _ in range(2):
        assert await calls(cache.get(BRAND_BY_ID, brand_id="s")) == 1
        assert await calls(cache.get(BRAND_BY_ID, brand_id="t")) == 1
    gate.up = True
    cache.flush()  # what the channel does when it hears again
    assert len(cache.entries) == 0
    assert await calls(cache.get(BRAND_BY_ID, brand_id="s")) == 1
    assert await calls(cache.get(BRAND_BY_ID, brand_id="s")) == 0


async def test_an_item_with_a_number_past_64_bits_is_kept(cache: CachedStorage) -> None:
    """Sizes come from orjson, which refuses such ints; item_size measures them."""
    await cache.transact_write([brand("n1", big=10**37)])
    await cache.get(BRAND_BY_ID, brand_id="n1")
    assert await calls(cache.get(BRAND_BY_ID, brand_id="n1")) == 0
    assert cache.entries.bytes > 0
