"""The storage cache across two real ``proofgate serve`` processes on one
SQLite file, through one real redis-server (a write on A drops B's entry,
and while Redis is down B reads the store and flushes when it is back) or
through the table's own log
(docs/design.md, Cache invalidations across processes)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from _live import ADMIN_KEY, RECALL, Gateway

from tests._support.redis_server import RedisServer

pytestmark = pytest.mark.slow

STATUS = """query($id: ID!) { product(id: $id) { status } }"""


@pytest.fixture
async def two_gateways(
    tmp_path: Path, redis_server: RedisServer
) -> AsyncIterator[tuple[Gateway, Gateway]]:
    env = {"PROOFGATE_REDIS_URL": redis_server.url, "PROOFGATE_CACHE": "on"}
    a = await Gateway(tmp_path, **env).start()
    b = await Gateway(tmp_path, **env).start()
    try:
        yield a, b
    finally:
        await a.stop()
        await b.stop()


async def _series(gateway: Gateway, name: str) -> float:
    response = await gateway.client.get(
        "/metrics", headers={"Authorization": f"Bearer {ADMIN_KEY}"}
    )
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in response.text.splitlines()
        if line.startswith(name + " ") or line.startswith(name + "{")
    )


async def _until_trusted(gateway: Gateway, trusted: bool, timeout: float = 10) -> None:
    async with asyncio.timeout(timeout):
        while await _series(gateway, "proofgate_cache_trusted") != float(trusted):
            await asyncio.sleep(0.02)


async def _status(gateway: Gateway, product_id: str, key: str) -> str:
    data = await gateway.data(STATUS, {"id": product_id}, key)
    return str(data["product"]["status"])


async def _a_recall_reaches_b(a: Gateway, b: Gateway, product_id: str, key: str) -> None:
    """B serves the product from its cache, then A recalls it: B answers the
    recall within the channel's bound."""
    assert await _status(b, product_id, key) == "ACTIVE"
    hits = await _series(b, "proofgate_cache_reads_total")
    assert await _status(b, product_id, key) == "ACTIVE"
    assert await _series(b, "proofgate_cache_reads_total") > hits  # B serves from its cache
    await a.data(RECALL, {"id": product_id}, key)
    acknowledged = time.perf_counter()
    async with asyncio.timeout(5):
        while await _status(b, product_id, key) != "RECALLED":
            pass
    print(f"\nB served A's write {1000 * (time.perf_counter() - acknowledged):.1f} ms after")


async def test_a_write_on_a_drops_bs_entry_and_redis_down_reads_through(
    two_gateways: tuple[Gateway, Gateway], redis_server: RedisServer
) -> None:
    a, b = two_gateways
    brand, key = await a.brand()
    first, second = await a.product(brand, key), await a.product(brand, key)
    await _until_trusted(b, True)
    assert await _status(b, second["id"], key) == "ACTIVE"
    await _a_recall_reaches_b(a, b, first["id"], key)

    redis_server.kill()
    await _until_trusted(b, False)
    await a.data(RECALL, {"id": second["id"]}, key)  # A cannot announce it
    assert await _status(b, second["id"], key) == "RECALLED"  # 0 stale: B reads the store

    flushes = 'proofgate_cache_invalidations_total{kind="flush"}'
    before = await _series(b, flushes)
    redis_server.start()
    await _until_trusted(b, True)
    assert await _series(b, flushes) > before  # heard again: flushed
    assert await _status(b, second["id"], key) == "RECALLED"


async def test_through_the_table_a_write_on_a_drops_bs_entry(tmp_path: Path) -> None:
    env = {"PROOFGATE_CACHE": "on", "PROOFGATE_CACHE_CHANNEL": "table"}
    a = await Gateway(tmp_path, **env).start()
    b = await Gateway(tmp_path, **env).start()
    try:
        brand, key = await a.brand()
        product = await a.product(brand, key)
        await _until_trusted(b, True)
        await _a_recall_reaches_b(a, b, product["id"], key)
    finally:
        await a.stop()
        await b.stop()
