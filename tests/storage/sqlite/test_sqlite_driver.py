"""Behaviour only the embedded backend has: the file, its threads, its limits.

What both backends share (conditions, paging, cursors) is in tests/conformance.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator
from contextlib import closing
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from domain.errors import (
    ConditionFailed,
    ConfigurationError,
    InvalidCursor,
    LimitExceeded,
    ServiceUnavailable,
)
from storage import (
    Compare,
    Comparison,
    ConditionCheck,
    Delete,
    ItemAbsent,
    ItemExists,
    Key,
    Put,
    Update,
)
from storage.limits import ITEM_MAX_BYTES, QUERY_PAGE_MAX_BYTES
from storage.registry import SortOperator, SortRange
from storage.sqlite import SqliteDriver, open_sqlite
from storage.table import GSI1
from storage.values import Item, item_size
from tests._support.queries import query_request


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "proofgate.sqlite"


@pytest.fixture
async def driver(path: Path) -> AsyncIterator[SqliteDriver]:
    driver = SqliteDriver(path)
    await driver.wait_ready()
    yield driver
    await driver.close()


def sized(pk: str, sk: str, size: int, **attributes: Any) -> Item:
    """An item of exactly ``size`` billed bytes."""
    item: Item = {"PK": pk, "SK": sk, **attributes, "pad": ""}
    item["pad"] = "x" * (size - item_size(item))
    assert item_size(item) == size
    return item


PRODUCTS = SortRange(SortOperator.BEGINS_WITH, "PRODUCT#")
EVERYTHING = SortRange(SortOperator.GTE, "A")


# --- the file -----------------------------------------------------------------


async def test_the_file_is_in_wal_mode(driver: SqliteDriver, path: Path) -> None:
    with closing(sqlite3.connect(path, isolation_level=None)) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)


async def test_two_drivers_on_one_file_see_each_others_writes(
    driver: SqliteDriver, path: Path
) -> None:
    other = SqliteDriver(path)
    try:
        await driver.write(Put({"PK": "P#1", "SK": "META", "by": "first"}))
        assert (await other.get_item(Key("P#1", "META"), True))[0] == {
            "PK": "P#1",
            "SK": "META",
            "by": "first",
        }
        await other.write(Update(Key("P#1", "META"), set={"by": "second"}))
        assert (await driver.get_item(Key("P#1", "META"), True))[0] == {
            "PK": "P#1",
            "SK": "META",
            "by": "second",
        }
    finally:
        await other.close()


async def test_counters_stay_exact_when_two_drivers_add_concurrently(
    driver: SqliteDriver, path: Path
) -> None:
    other = SqliteDriver(path)
    try:
        counter = Update(Key("BRAND#b", "STATS"), add={"scans": 1})
        await asyncio.gather(*(d.write(counter) for d in (driver, other) for _ in range(25)))
        item, _ = await driver.get_item(Key("BRAND#b", "STATS"), True)
        assert item is not None and item["scans"] == 50
    finally:
        await other.close()


async def test_a_read_does_not_wait_behind_a_write_waiting_for_the_lock(path: Path) -> None:
    driver = SqliteDriver(path, timeout=5.0)
    await driver.wait_ready()
    await driver.write(Put({"PK": "P#1", "SK": "META"}))
    raw = sqlite3.connect(path, isolation_level=None)
    try:
        raw.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        write = asyncio.create_task(driver.write(Put({"PK": "P#2", "SK": "META"})))
        item, _ = await asyncio.wait_for(driver.get_item(Key("P#1", "META"), True), timeout=2.0)
        assert item is not None
        assert not write.done()
        raw.execute("COMMIT")
        assert await asyncio.wait_for(write, timeout=5.0) == 1.0
    finally:
        raw.close()
        await driver.close()


async def test_a_write_lock_held_too_long_is_service_unavailable(path: Path) -> None:
    driver = SqliteDriver(path, timeout=0.05)
    await driver.wait_ready()
    raw = sqlite3.connect(path, isolation_level=None)
    try:
        raw.execute("BEGIN IMMEDIATE")
        with pytest.raises(ServiceUnavailable):
            await driver.write(Put({"PK": "P#1", "SK": "META"}))
        raw.execute("ROLLBACK")
        await driver.write(Put({"PK": "P#1", "SK": "META"}))
    finally:
        raw.close()
        await driver.close()


async def test_close_stops_the_writer_and_refuses_later_calls(path: Path) -> None:
    before = set(threading.enumerate())
    driver = SqliteDriver(path)
    await driver.wait_ready()
    started = set(threading.enumerate()) - before
    assert len(started) == 2  # the writer and the checkpoints; reads run on the loop's thread
    await driver.write(Put({"PK": "P#1", "SK": "META"}))
    assert (await driver.get_item(Key("P#1", "META"), True))[0] is not None
    await driver.close()
    assert not any(thread.is_alive() for thread in started)
    with pytest.raises(ServiceUnavailable):
        await driver.get_item(Key("P#1", "META"), True)
    await driver.close()


async def test_memory_uses_one_thread_for_reads_and_writes() -> None:
    before = set(threading.enumerate())
    driver = SqliteDriver(":memory:")
    await driver.wait_ready()
    assert len(set(threading.enumerate()) - before) == 1
    await driver.write(Put({"PK": "P#1", "SK": "META"}))
    assert (await driver.get_item(Key("P#1", "META"), True))[0] is not None
    await driver.close()


async def test_a_path_that_cannot_be_opened_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError):
        await open_sqlite(tmp_path / "missing" / "proofgate.sqlite", cursor_key=bytes(32))


async def test_a_file_from_a_newer_schema_is_refused(driver: SqliteDriver, path: Path) -> None:
    with closing(sqlite3.connect(path, isolation_level=None)) as raw:
        raw.execute("PRAGMA user_version = 99")
    with pytest.raises(ConfigurationError):
        await open_sqlite(path, cursor_key=bytes(32))


# --- the stored form --------------------------------------------------------------


async def test_items_come_back_with_exact_types(driver: SqliteDriver) -> None:
    item = {
        "PK": "P#1",
        "SK": "META",
        "count": 3,
        "price": Decimal("0.10"),
        "digest": b"\x00\x01\xff",
        "nested": {"list": [Decimal("1.25"), 2, {"deep": b"x"}], "none": None, "yes": True},
    }
    await driver.write(Put(item))
    stored, _ = await driver.get_item(Key("P#1", "META"), True)
    assert stored == item
    assert stored is not None
    assert type(stored["count"]) is int
    assert stored["price"] == Decimal("0.1") and type(stored["price"]) is Decimal
    assert type(stored["digest"]) is bytes
    assert type(stored["nested"]["list"][1]) is int


async def test_an_update_that_outgrows_the_item_limit_changes_nothing(driver: SqliteDriver) -> None:
    item = sized("P#1", "META", ITEM_MAX_BYTES - 10)
    await driver.write(Put(item))
    with pytest.raises(LimitExceeded):
        await driver.write(Update(Key("P#1", "META"), set={"more": "y" * 100}))
    assert (await driver.get_item(Key("P#1", "META"), True))[0] == item


async def test_an_update_cannot_give_a_gsi_key_a_non_string(driver: SqliteDriver) -> None:
    with pytest.raises(LimitExceeded):
        await driver.write(Update(Key("P#1", "META"), set={"GSI1PK": 5}))


# --- capacity -------------------------------------------------------------------------


@pytest.mark.parametrize(("size", "units"), [(100, 1.0), (4096, 1.0), (4097, 2.0), (12289, 4.0)])
async def test_get_item_bills_per_4kb_and_eventual_reads_half(
    driver: SqliteDriver, size: int, units: float
) -> None:
    await driver.write(Put(sized("P#1", "META", size)))
    assert (await driver.get_item(Key("P#1", "META"), True))[1] == units
    assert (await driver.get_item(Key("P#1", "META"), False))[1] == units / 2


async def test_a_missing_item_still_costs_one_read(driver: SqliteDriver) -> None:
    assert await driver.get_item(Key("P#0", "META"), True) == (None, 1.0)
    assert await driver.get_item(Key("P#0", "META"), False) == (None, 0.5)


async def test_batch_get_rounds_each_item_but_query_rounds_the_total(driver: SqliteDriver) -> None:
    for n in (1, 2, 3):
        await driver.write(Put(sized("P#1", f"EVENT#{n}", 1000)))
    keys = [Key("P#1", f"EVENT#{n}") for n in (1, 2, 3)]
    batch = await driver.batch_get_items([*keys, Key("P#1", "EVENT#9")], True)
    assert (len(batch.items), batch.unprocessed, batch.capacity) == (3, [], 4.0)
    assert (await driver.batch_get_items(keys, False)).capacity == 1.5
    result = await driver.query(query_request("P#1", SortRange(SortOperator.BEGINS_WITH, "EVENT#")))
    assert (len(result.items), result.capacity) == (3, 1.0)
    empty = await driver.query(query_request("P#2", EVERYTHING))
    assert (empty.items, empty.capacity) == ([], 1.0)


async def test_writes_bill_per_kb_of_the_larger_image(driver: SqliteDriver) -> None:
    assert await driver.write(Put(sized("P#1", "META", 1024))) == 1.0
    assert await driver.write(Put(sized("P#1", "META", 3000))) == 3.0
    assert await driver.write(Put(sized("P#1", "META", 100))) == 3.0  # replaced 3000 bytes
    assert await driver.write(Update(Key("P#1", "META"), set={"big": "y" * 1500})) == 2.0
    assert await driver.write(Delete(Key("P#1", "META"))) == 2.0
    assert await driver.write(Delete(Key("P#1", "META"))) == 1.0  # nothing to delete


async def test_transactional_writes_and_condition_checks_bill_double(driver: SqliteDriver) -> None:
    await driver.write(Put(sized("P#1", "META", 2500)))
    capacity = await driver.transact_write(
        [Put(sized("P#2", "META", 1025)), ConditionCheck(Key("P#1", "META"), ItemExists())]
    )
    assert capacity == 2 * 2 + 2 * 3
    assert await driver.write(ConditionCheck(Key("P#1", "META"), ItemExists())) == 6.0


# --- writes -----------------------------------------------------------------------------


async def test_a_failed_transaction_names_the_first_failing_action_and_writes_nothing(
    driver: SqliteDriver,
) -> None:
    await driver.write(Put({"PK": "P#1", "SK": "META", "v": 1}))
    with pytest.raises(ConditionFailed) as failed:
        await driver.transact_write(
            [
                Put({"PK": "P#2", "SK": "META"}),
                Update(Key("P#1", "META"), set={"v": 2}, condition=Compare("v", Comparison.EQ, 5)),
                Put({"PK": "P#1", "SK": "OTHER"}, condition=ItemExists()),
            ]
        )
    assert (failed.value.index, failed.value.key) == (1, ("P#1", "META"))
    assert (await driver.get_item(Key("P#2", "META"), True))[0] is None
    assert (await driver.get_item(Key("P#1", "META"), True))[0] == {
        "PK": "P#1",
        "SK": "META",
        "v": 1,
    }


async def test_a_failed_single_write_is_index_zero(driver: SqliteDriver) -> None:
    await driver.write(Put({"PK": "P#1", "SK": "META"}))
    with pytest.raises(ConditionFailed) as failed:
        await driver.write(Put({"PK": "P#1", "SK": "META", "v": 2}, condition=ItemAbsent()))
    assert (failed.value.index, failed.value.key) == (0, ("P#1", "META"))


# --- query ------------------------------------------------------------------------------


async def test_the_1mb_cut_returns_a_last_evaluated_key(driver: SqliteDriver) -> None:
    size = 300 * 1024
    for n in range(1, 5):
        await driver.write(Put(sized("P#1", f"EVENT#{n}", size)))
    first = await driver.query(query_request("P#1", EVERYTHING, limit=10))
    assert [item["SK"] for item in first.items] == ["EVENT#1", "EVENT#2", "EVENT#3"]
    assert len(first.items) * size <= QUERY_PAGE_MAX_BYTES
    assert first.last_evaluated_key == {"PK": "P#1", "SK": "EVENT#3"}
    assert first.capacity == 3 * size / 4096
    rest = await driver.query(
        query_request("P#1", EVERYTHING, limit=10, start=first.last_evaluated_key)
    )
    assert ([item["SK"] for item in rest.items], rest.last_evaluated_key) == (["EVENT#4"], None)


async def test_one_item_over_1mb_of_a_page_still_comes_back(driver: SqliteDriver) -> None:
    await driver.write(Put(sized("P#1", "EVENT#1", ITEM_MAX_BYTES)))
    await driver.write(Put(sized("P#1", "EVENT#2", ITEM_MAX_BYTES)))
    await driver.write(Put(sized("P#1", "EVENT#3", ITEM_MAX_BYTES)))
    result = await driver.query(query_request("P#1", EVERYTHING, limit=10))
    assert len(result.items) == 2 and result.last_evaluated_key == {"PK": "P#1", "SK": "EVENT#2"}


async def test_reaching_the_limit_returns_a_key_even_at_the_end(driver: SqliteDriver) -> None:
    for n in (1, 2):
        await driver.write(Put({"PK": "P#1", "SK": f"EVENT#{n}"}))
    first = await driver.query(query_request("P#1", EVERYTHING, limit=2))
    assert first.last_evaluated_key == {"PK": "P#1", "SK": "EVENT#2"}
    after = await driver.query(
        query_request("P#1", EVERYTHING, limit=2, start=first.last_evaluated_key)
    )
    assert (after.items, after.last_evaluated_key) == ([], None)


@pytest.mark.parametrize(("forward", "start"), [(True, "EVENT#0"), (False, "EVENT#9")])
async def test_a_start_key_outside_the_range_never_widens_it(
    driver: SqliteDriver, forward: bool, start: str
) -> None:
    for n in range(1, 6):
        await driver.write(Put({"PK": "P#1", "SK": f"EVENT#{n}"}))
    between = SortRange(SortOperator.BETWEEN, "EVENT#2", "EVENT#4")
    request = query_request("P#1", between, forward=forward, start={"PK": "P#1", "SK": start})
    result = await driver.query(request)
    assert sorted(item["SK"] for item in result.items) == ["EVENT#2", "EVENT#3", "EVENT#4"]


async def test_string_keys_order_by_utf8_bytes_and_begins_with_is_case_sensitive(
    driver: SqliteDriver,
) -> None:
    # UTF-16 would put U+10000 before U+FFFF; UTF-8 bytes (and DynamoDB) do not.
    for suffix in ("\U00010000", "\uffff", "a", "A", "a\u00e9"):
        await driver.write(Put({"PK": "P#1", "SK": f"EVENT#{suffix}"}))
    result = await driver.query(query_request("P#1", SortRange(SortOperator.BEGINS_WITH, "EVENT#")))
    assert [item["SK"] for item in result.items] == [
        "EVENT#A",
        "EVENT#a",
        "EVENT#a\u00e9",
        "EVENT#\uffff",
        "EVENT#\U00010000",
    ]
    lower = await driver.query(query_request("P#1", SortRange(SortOperator.BEGINS_WITH, "EVENT#a")))
    assert [item["SK"] for item in lower.items] == ["EVENT#a", "EVENT#a\u00e9"]
    top = await driver.query(
        query_request("P#1", SortRange(SortOperator.BEGINS_WITH, "EVENT#\uffff"))
    )
    assert [item["SK"] for item in top.items] == ["EVENT#\uffff"]
    backward = await driver.query(
        query_request("P#1", SortRange(SortOperator.LT, "EVENT#b"), forward=False)
    )
    assert [item["SK"] for item in backward.items] == ["EVENT#a\u00e9", "EVENT#a", "EVENT#A"]


async def test_gsi_orders_ties_by_table_key_and_resumes_on_all_four_attributes(
    driver: SqliteDriver,
) -> None:
    def product(pk: str, gsi_sk: str | None) -> Item:
        item: Item = {"PK": pk, "SK": "META", "GSI1PK": "BRAND#b"}
        if gsi_sk is not None:
            item["GSI1SK"] = gsi_sk
        return item

    for item in (
        product("PRODUCT#c", "PRODUCT#2"),
        product("PRODUCT#b", "PRODUCT#1"),
        product("PRODUCT#a", "PRODUCT#1"),
        product("PRODUCT#z", None),  # no GSI1SK: not in the sparse index
        {"PK": "PRODUCT#y", "SK": "META", "GSI1PK": "BRAND#other", "GSI1SK": "PRODUCT#1"},
    ):
        await driver.write(Put(item))

    async def walk(forward: bool) -> tuple[list[str], list[dict[str, str] | None]]:
        seen: list[str] = []
        keys: list[dict[str, str] | None] = []
        start: dict[str, str] | None = None
        for _ in range(10):  # a resume that repeats an item must fail, not loop
            result = await driver.query(
                query_request(
                    "BRAND#b", PRODUCTS, index=GSI1, limit=1, forward=forward, start=start
                )
            )
            seen += [item["PK"] for item in result.items]
            keys.append(result.last_evaluated_key)
            if result.last_evaluated_key is None:
                return seen, keys
            start = result.last_evaluated_key
        raise AssertionError(f"paging did not end: {seen}")

    forward, keys = await walk(True)
    assert forward == ["PRODUCT#a", "PRODUCT#b", "PRODUCT#c"]
    assert keys[0] == {"PK": "PRODUCT#a", "SK": "META", "GSI1PK": "BRAND#b", "GSI1SK": "PRODUCT#1"}
    assert (await walk(False))[0] == ["PRODUCT#c", "PRODUCT#b", "PRODUCT#a"]


async def test_a_gsi_start_key_without_the_table_key_is_an_invalid_cursor(
    driver: SqliteDriver,
) -> None:
    with pytest.raises(InvalidCursor):
        await driver.query(
            query_request(
                "BRAND#b",
                PRODUCTS,
                index=GSI1,
                limit=1,
                start={"GSI1PK": "BRAND#b", "GSI1SK": "PRODUCT#1"},
            )
        )


# --- end to end through Store --------------------------------------------------------------


async def test_store_end_to_end_on_a_file(path: Path) -> None:
    from storage.access_patterns import BRAND_STATS, PRODUCT_BY_ID, PROVENANCE_CHAIN

    storage = await open_sqlite(path, cursor_key=bytes(32))
    try:
        assert storage.backend == "sqlite"
        await storage.transact_write([Put({"PK": "PRODUCT#p1", "SK": "META", "name": "Widget"})])
        await storage.transact_write(
            [Put({"PK": "PRODUCT#p1", "SK": f"EVENT#{n:012d}", "sequence": n}) for n in range(1, 6)]
            + [Update(Key("BRAND#b", "STATS"), add={"productCount": 1})]
        )
        assert await storage.get(PRODUCT_BY_ID, product_id="p1") == {
            "PK": "PRODUCT#p1",
            "SK": "META",
            "name": "Widget",
        }
        first = await storage.query(PROVENANCE_CHAIN, {"product_id": "p1"}, tenant="t", first=3)
        rest = await storage.query(
            PROVENANCE_CHAIN, {"product_id": "p1"}, tenant="t", after=first.end_cursor
        )
        assert [i["sequence"] for i in first.items] == [1, 2, 3] and first.has_next_page
        assert [i["sequence"] for i in rest.items] == [4, 5] and not rest.has_next_page
        stats = await storage.batch_get(BRAND_STATS, [{"brand_id": "b"}, {"brand_id": "none"}])
        assert stats == [{"PK": "BRAND#b", "SK": "STATS", "productCount": 1}, None]
    finally:
        await storage.close()


async def test_each_connection_keeps_the_page_cache_it_was_given(tmp_path: Path) -> None:
    """``PROOFGATE_SQLITE_CACHE_MB`` is what the store adds to resident memory
    as the table grows, so every connection must hold to it."""
    driver = SqliteDriver(tmp_path / "cache.db", cache_mib=3, ttl_sweep_seconds=None)
    try:
        await driver.wait_ready()

        def cache_size(connection: sqlite3.Connection) -> int:
            (size,) = connection.execute("PRAGMA cache_size").fetchone()
            return int(size)

        assert await driver._writer.call(cache_size) == -3 * 1024
        assert await driver._reader.call(cache_size) == -3 * 1024
        await driver.write(Put({"PK": "P#1", "SK": "META"}))  # opens the loop's writer
        assert driver._inline is not None and driver._inline._connection
        assert cache_size(driver._inline._connection) == -3 * 1024
    finally:
        await driver.close()


async def test_both_writing_connections_keep_savepoint_journals_in_memory(tmp_path: Path) -> None:
    """A group's savepoints journal the pages they change; on disk that is a
    temporary file and a write syscall per page (storage/sqlite/_schema.py)."""
    driver = SqliteDriver(tmp_path / "journal.db", ttl_sweep_seconds=None)
    try:
        await driver.wait_ready()

        def temp_store(connection: sqlite3.Connection) -> int:
            (store,) = connection.execute("PRAGMA temp_store").fetchone()
            return int(store)

        memory = 2
        assert await driver._writer.call(temp_store) == memory
        await driver.write(Put({"PK": "P#1", "SK": "META"}))  # opens the loop's writer
        assert driver._inline is not None and driver._inline._connection
        assert temp_store(driver._inline._connection) == memory
    finally:
        await driver.close()
