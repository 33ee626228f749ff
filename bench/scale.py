"""Latency against table size: the same reads on 10,000 and 1,000,000 items.

The budget (docs/design.md, Performance budgets): 1M vs 10k items, a ratio
of at most 1.25. Every read is a B-tree seek, so size should cost at most one more tree
level. Loading a million items through the adapter would take minutes, so the
tables are filled with ``executemany`` in the stored form the SQLite backend
writes (its own encoder and key columns); the measured reads all go through
the adapter.
"""

from __future__ import annotations

import random
import sqlite3
import tempfile
from pathlib import Path

from storage.access_patterns import PRODUCT_BY_ID, PROVENANCE_CHAIN
from storage.cursor import CursorCodec
from storage.protocol import Storage
from storage.sqlite import open_sqlite
from storage.sqlite._codec import encode_item
from storage.sqlite._schema import UPSERT, row_keys
from storage.values import item_size

from ._harness import Result, measure_async, print_table

SIZES = (10_000, 1_000_000)
EVENTS_PER_PRODUCT = 10
COUNT = 4000


def _rows(products: int) -> list[tuple[object, ...]]:
    rows: list[tuple[object, ...]] = []
    for i in range(products // (EVENTS_PER_PRODUCT + 1)):
        key = PRODUCT_BY_ID.key(product_id=f"p{i:07d}")
        items = [{"PK": key.pk, "SK": key.sk, "name": f"Product {i}", "scanCount": i % 97}]
        items += [
            {"PK": key.pk, "SK": f"EVENT#{s:012d}", "sequence": s, "type": "SHIPPED"}
            for s in range(1, EVENTS_PER_PRODUCT + 1)
        ]
        rows += [(*row_keys(item), item_size(item), encode_item(item)) for item in items]
    return rows


async def _measure(path: Path, items: int) -> dict[str, Result]:
    storage: Storage = await open_sqlite(path, cursor_key=CursorCodec.generate_key())
    await storage.close()  # creates the schema
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("BEGIN")
    connection.executemany(UPSERT, _rows(items))
    connection.execute("COMMIT")
    connection.close()
    products = items // (EVENTS_PER_PRODUCT + 1)
    picks = random.Random(7)
    storage = await open_sqlite(path, cursor_key=CursorCodec.generate_key())
    try:

        async def get(i: int) -> object:
            return await storage.get(PRODUCT_BY_ID, product_id=f"p{picks.randrange(products):07d}")

        async def query(i: int) -> object:
            product = f"p{picks.randrange(products):07d}"
            return await storage.query(
                PROVENANCE_CHAIN, {"product_id": product}, tenant="bench", first=10
            )

        return {
            "get": await measure_async("get", get, COUNT),
            "query page 10": await measure_async("query", query, COUNT),
        }
    finally:
        await storage.close()


async def run() -> None:
    results: dict[int, dict[str, Result]] = {}
    with tempfile.TemporaryDirectory() as directory:
        for size in SIZES:
            results[size] = await _measure(Path(directory) / f"scale-{size}.db", size)
    small, large = results[SIZES[0]], results[SIZES[1]]
    rows = [
        (
            name,
            f"{small[name].p50_us:.1f}",
            f"{large[name].p50_us:.1f}",
            f"{large[name].p50_us / small[name].p50_us:.2f}",
            f"{small[name].p99_us:.1f}",
            f"{large[name].p99_us:.1f}",
        )
        for name in small
    ]
    print_table(
        f"scale: sqlite adapter, {SIZES[0]:,} vs {SIZES[1]:,} items (budget: p50 ratio <= 1.25)",
        rows,
        ("operation", "p50 us (10k)", "p50 us (1M)", "p50 ratio", "p99 us (10k)", "p99 us (1M)"),
    )
