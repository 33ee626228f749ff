"""TTL expiry on the embedded store: a sweep through the TTL index deletes
expired items in bounded batches, as DynamoDB's TTL does, and files from the
schema before the TTL column are migrated in place."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator
from contextlib import closing
from decimal import Decimal
from pathlib import Path

import pytest

from storage import Key, Put
from storage.sqlite import SqliteDriver
from storage.sqlite._schema import DELETE_EXPIRED, SCHEMA_VERSION
from storage.sqlite._ttl import TTL_MAX_AGE_SECONDS, TtlSweeper
from storage.values import Item

NOW = 1_800_000_000


@pytest.fixture
async def driver(tmp_path: Path) -> AsyncIterator[SqliteDriver]:
    """No background sweep: each test sweeps when it means to."""
    driver = SqliteDriver(tmp_path / "ttl.db", ttl_sweep_seconds=None)
    await driver.wait_ready()
    yield driver
    await driver.close()


def sweeper(driver: SqliteDriver, **options: int) -> TtlSweeper:
    return TtlSweeper(driver._writer, clock=lambda: NOW, **options)


async def put(driver: SqliteDriver, name: str, **attributes: object) -> Key:
    item: Item = {"PK": name, "SK": "META", **attributes}
    await driver.write(Put(item))
    return Key(name, "META")


async def present(driver: SqliteDriver, key: Key) -> bool:
    item, _ = await driver.get_item(key, consistent=True)
    return item is not None


async def test_a_sweep_deletes_expired_items_and_keeps_the_rest(driver: SqliteDriver) -> None:
    expired = [
        await put(driver, "EXPIRED-INT", expiresAt=NOW - 1),
        await put(driver, "EXPIRED-DECIMAL", expiresAt=Decimal("1799999999.5")),
    ]
    kept = [
        await put(driver, "LATER", expiresAt=NOW + 1),
        await put(driver, "NOW", expiresAt=NOW),
        await put(driver, "FOREVER"),
        await put(driver, "NOT-A-NUMBER", expiresAt=str(NOW - 1)),
        await put(driver, "ANCIENT", expiresAt=NOW - TTL_MAX_AGE_SECONDS - 1),
    ]

    assert await sweeper(driver).sweep() == len(expired)

    assert [await present(driver, key) for key in expired] == [False, False]
    assert all([await present(driver, key) for key in kept])


async def test_a_sweep_is_bounded_per_batch_and_per_run(driver: SqliteDriver) -> None:
    for n in range(25):
        await put(driver, f"BACKLOG-{n:02}", expiresAt=NOW - 100 + n)
    bounded = sweeper(driver, batch=10, max_batches=2)

    assert await bounded.sweep() == 20
    assert [await present(driver, Key(f"BACKLOG-{n:02}", "META")) for n in (19, 20)] == [
        False,
        True,
    ]
    assert await bounded.sweep() == 5


async def test_the_sweep_reads_through_the_ttl_index(driver: SqliteDriver, tmp_path: Path) -> None:
    with closing(sqlite3.connect(tmp_path / "ttl.db")) as raw:
        plan = " ".join(
            str(row[-1]) for row in raw.execute(f"EXPLAIN QUERY PLAN {DELETE_EXPIRED}", (0, 1, 1))
        )
    assert "items_ttl" in plan


async def test_the_store_sweeps_in_the_background_until_closed(tmp_path: Path) -> None:
    driver = SqliteDriver(tmp_path / "bg.db", ttl_sweep_seconds=0.01)
    await driver.wait_ready()
    try:
        key = await put(driver, "EXPIRED", expiresAt=int(time.time()) - 10)
        for _ in range(500):
            if not await present(driver, key):
                break
            await asyncio.sleep(0.01)
        assert not await present(driver, key)
    finally:
        await driver.close()
    assert driver.ttl_sweeper is not None and driver.ttl_sweeper._task is None


# The schema of version 1, as files written before the TTL column hold it.
_VERSION_1 = [
    "CREATE TABLE items (pk TEXT NOT NULL, sk TEXT NOT NULL, gsi1pk TEXT, gsi1sk TEXT, "
    "gsi2pk TEXT, gsi2sk TEXT, size INTEGER NOT NULL, data TEXT NOT NULL, "
    "PRIMARY KEY (pk, sk)) WITHOUT ROWID",
    "CREATE INDEX items_gsi1 ON items (gsi1pk, gsi1sk, pk, sk) WHERE gsi1pk IS NOT NULL",
    "CREATE INDEX items_gsi2 ON items (gsi2pk, gsi2sk, pk, sk) WHERE gsi2pk IS NOT NULL",
    "PRAGMA user_version = 1",
]


async def test_a_version_1_file_is_migrated_and_its_expired_items_swept(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with closing(sqlite3.connect(path)) as raw:
        for statement in _VERSION_1:
            raw.execute(statement)
        rows = [
            ("OLD-EXPIRED", f'{{"PK":"OLD-EXPIRED","SK":"META","expiresAt":{NOW - 5}}}'),
            ("OLD-LATER", f'{{"PK":"OLD-LATER","SK":"META","expiresAt":{NOW + 5}}}'),
            ("OLD-PLAIN", '{"PK":"OLD-PLAIN","SK":"META"}'),
        ]
        raw.executemany("INSERT INTO items (pk, sk, size, data) VALUES (?, 'META', 10, ?)", rows)
        raw.commit()

    driver = SqliteDriver(path, ttl_sweep_seconds=None)
    await driver.wait_ready()
    try:
        assert await sweeper(driver).sweep() == 1
        assert [await present(driver, Key(pk, "META")) for pk, _ in rows] == [False, True, True]
    finally:
        await driver.close()
    with closing(sqlite3.connect(path)) as raw:
        assert raw.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
