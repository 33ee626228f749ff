"""Storage adapter against raw sqlite3 running the same statements, and moto.

Four operations: get, batch_get of 50, a query page of 20 and a 4-item
transaction. The SQLite numbers are measured side by side in one run: the
adapter (``Store`` over the SQLite driver, async, on its worker threads) and
raw ``sqlite3`` executing the same SQL synchronously on the same file. The
adapter is measured one call at a time and with 32 calls in flight, since the
thread hop is the fixed cost that concurrency amortises.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from domain.errors import ServiceUnavailable
from storage import Put, Update
from storage.access_patterns import PRODUCT_BY_ID, PROVENANCE_CHAIN
from storage.cursor import CursorCodec
from storage.protocol import Storage
from storage.sqlite import open_sqlite

from ._harness import Result, measure_async, measure_sync, print_table
from ._moto import moto_storage

PRODUCTS = 10_000
EVENTS_PER_PRODUCT = 25
N = 3000

_T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _product(i: int) -> dict[str, object]:
    key = PRODUCT_BY_ID.key(product_id=f"p{i:06d}")
    return {
        "PK": key.pk,
        "SK": key.sk,
        "entity": "Product",
        "id": f"p{i:06d}",
        "brandId": f"b{i % 50:03d}",
        "name": f"Product {i}",
        "status": "ACTIVE",
        "createdAt": (_T0 + timedelta(seconds=i)).isoformat(),
        "scanCount": 0,
        "metadata": {"color": "red", "size": i % 7},
    }


def _event(product: int, sequence: int) -> dict[str, object]:
    return {
        "PK": f"PRODUCT#p{product:06d}",
        "SK": f"EVENT#{sequence:012d}",
        "entity": "ProvenanceEvent",
        "sequence": sequence,
        "type": "SHIPPED",
        "location": "Rotterdam",
        "hash": "ab" * 32,
    }


async def _load(storage: Storage) -> None:
    puts = [Put(_product(i)) for i in range(PRODUCTS)]
    puts += [Put(_event(p, s)) for p in range(200) for s in range(1, EVENTS_PER_PRODUCT + 1)]
    for start in range(0, len(puts), 100):
        await asyncio.gather(*(storage.transact_write([p]) for p in puts[start : start + 100]))


def _raw_sqlite(path: Path, decode: bool) -> dict[str, Result]:
    """``decode`` adds the least a raw caller must do to use a row: json.loads."""
    connection = sqlite3.connect(path, isolation_level=None, cached_statements=512)
    connection.execute("PRAGMA synchronous = NORMAL")
    get_sql = "SELECT data, size FROM items WHERE pk = ? AND sk = ?"
    batch_sql = (
        "SELECT data, size FROM (VALUES "
        + ", ".join(["(?, ?)"] * 64)
        + ") AS wanted CROSS JOIN items ON items.pk = wanted.column1 AND items.sk = wanted.column2"
    )
    query_sql = (
        "SELECT data, size FROM items WHERE pk = ? AND sk >= ? AND sk < ? ORDER BY sk LIMIT ?"
    )

    loads = json.loads if decode else str

    def get(i: int) -> object:
        rows = connection.execute(get_sql, (f"PRODUCT#p{i % PRODUCTS:06d}", "META")).fetchall()
        return [loads(data) for data, _ in rows]

    def batch(i: int) -> object:
        keys: list[str] = []
        for j in range(50):
            keys += [f"PRODUCT#p{(i * 50 + j) % PRODUCTS:06d}", "META"]
        keys += ["", ""] * 14
        return [loads(data) for data, _ in connection.execute(batch_sql, keys).fetchall()]

    def query(i: int) -> object:
        rows = connection.execute(
            query_sql, (f"PRODUCT#p{i % 200:06d}", "EVENT#", "EVENT$", 21)
        ).fetchall()
        return [loads(data) for data, _ in rows]

    def transaction(i: int) -> None:
        connection.execute("BEGIN IMMEDIATE")
        for j in range(4):
            pk = f"PRODUCT#p{(i * 4 + j) % PRODUCTS:06d}"
            connection.execute(get_sql, (pk, "META")).fetchall()
            connection.execute(
                "INSERT OR REPLACE INTO items (pk, sk, gsi1pk, gsi1sk, gsi2pk, gsi2sk, size, data) "
                "VALUES (?, ?, NULL, NULL, NULL, NULL, ?, ?)",
                (f"BENCH#{i}", f"T#{j}", 40, '{"PK":"x"}'),
            )
        connection.execute("COMMIT")

    results = {
        "get": measure_sync("raw get", get, N),
        "batch_get 50": measure_sync("raw batch", batch, N // 10),
        "query page 20": measure_sync("raw query", query, N),
        "transaction 4 items": measure_sync("raw txn", transaction, N // 3),
    }
    connection.close()
    return results


def _operations(storage: Storage) -> dict[str, tuple[object, int]]:
    async def get(i: int) -> object:
        return await storage.get(PRODUCT_BY_ID, product_id=f"p{i % PRODUCTS:06d}")

    async def batch(i: int) -> object:
        return await storage.batch_get(
            PRODUCT_BY_ID, [{"product_id": f"p{(i * 50 + j) % PRODUCTS:06d}"} for j in range(50)]
        )

    async def query(i: int) -> object:
        return await storage.query(
            PROVENANCE_CHAIN, {"product_id": f"p{i % 200:06d}"}, tenant="bench", first=20
        )

    counter = iter(range(10**9))

    async def transaction(i: int) -> None:
        n = next(counter)
        await storage.transact_write(
            [
                Update(
                    PRODUCT_BY_ID.key(product_id=f"p{(n * 4 + j) % PRODUCTS:06d}"),
                    add={"scanCount": 1},
                )
                for j in range(4)
            ]
        )

    return {
        "get": (get, N),
        "batch_get 50": (batch, N // 10),
        "query page 20": (query, N),
        "transaction 4 items": (transaction, N // 3),
    }


async def _adapter(
    storage: Storage, concurrency: int, scale: int = 1, failures: list[str] | None = None
) -> dict[str, Result]:
    results = {}
    for name, (operation, count) in _operations(storage).items():
        if failures is not None:
            operation = _tolerant(operation, name, failures)
        results[name] = await measure_async(name, operation, max(50, count // scale), concurrency)  # type: ignore[arg-type]
    return results


def _tolerant(operation: Any, name: str, failures: list[str]) -> Any:
    """moto's development server sometimes drops a kept-alive connection; the
    driver then refuses to retry a write that may have applied. Count, go on."""

    async def run(i: int) -> object:
        try:
            return await operation(i)
        except ServiceUnavailable:
            failures.append(name)
            return None

    return run


async def _moto() -> dict[str, Result] | None:
    async with moto_storage("bench") as storage:
        if storage is None:
            return None
        global PRODUCTS
        # moto copies the table on every transaction action: keep it small.
        saved, PRODUCTS = PRODUCTS, 200
        puts = [Put(_product(i)) for i in range(PRODUCTS)]
        puts += [Put(_event(p, s)) for p in range(200) for s in range(1, 6)]
        for start in range(0, len(puts), 50):
            await asyncio.gather(*(storage.transact_write([p]) for p in puts[start : start + 50]))
        failures: list[str] = []
        results = await _adapter(storage, concurrency=1, scale=30, failures=failures)
        PRODUCTS = saved
        if failures:
            dropped = sorted(set(failures))
            print(f"(moto: {len(failures)} calls failed on dropped connections: {dropped})")
        return results


async def run() -> None:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "bench.db"
        storage = await open_sqlite(path, cursor_key=CursorCodec.generate_key())
        try:
            await _load(storage)
            raw = _raw_sqlite(path, decode=False)
            raw_decoded = _raw_sqlite(path, decode=True)
            sequential = await _adapter(storage, concurrency=1)
            concurrent = await _adapter(storage, concurrency=32)
        finally:
            await storage.close()
    rows = []
    for name, base in raw.items():
        decoded, one, many = raw_decoded[name], sequential[name], concurrent[name]
        rows.append(
            (
                name,
                f"{base.ops_per_second:,.0f}",
                f"{decoded.ops_per_second:,.0f}",
                f"{one.ops_per_second:,.0f} ({base.ops_per_second / one.ops_per_second:.2f}x)",
                f"{many.ops_per_second:,.0f} ({base.ops_per_second / many.ops_per_second:.2f}x"
                f" / {decoded.ops_per_second / many.ops_per_second:.2f}x)",
            )
        )
    print_table(
        f"storage: sqlite adapter vs raw sqlite3 ({PRODUCTS:,} products, same file, same SQL)",
        rows,
        (
            "operation",
            "raw sqlite3 ops/s",
            "raw + json.loads ops/s",
            "adapter, 1 in flight (overhead vs raw)",
            "adapter, 32 in flight (vs raw / vs raw+loads)",
        ),
    )
    print(
        "\nOverhead = raw ops/s / adapter ops/s. The adapter pays a thread hop per call"
        " (the event loop never runs SQLite); with calls in flight the hop is shared."
    )
    moto = await _moto()
    if moto:
        print_table(
            "storage: dynamodb backend against moto server on 127.0.0.1 (orientation only)",
            [
                (
                    name,
                    f"{r.ops_per_second:,.0f}",
                    f"{r.p50_us / 1000:.2f}",
                    f"{r.p99_us / 1000:.2f}",
                )
                for name, r in moto.items()
            ],
            ("operation", "ops/s", "p50 ms", "p99 ms"),
        )
