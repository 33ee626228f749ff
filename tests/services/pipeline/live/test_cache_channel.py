"""Cache invalidations across processes through a real redis-server
(docs/design.md, Cache invalidations across processes).

Two caches over one SQLite file stand for two processes: each has its own
``CacheChannel`` and Redis connections, and hears the other only through
Redis. A differential compares every read of B's cache with the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from services.pipeline.live.cache_channel import CacheChannel
from services.pipeline.live.messages import sign_body
from storage import Storage, Update
from storage.access_patterns import BRAND_BY_ID
from storage.cache import Invalidation
from storage.sqlite import open_sqlite
from tests._support.redis_server import RedisServer
from tests.services.pipeline.live._cache_processes import (
    BRANDS,
    CHANNEL,
    CURSOR_KEY,
    KEY,
    DeafChannel,
    Process,
    stale_reads,
    through_redis,
)


class LossyChannel(CacheChannel):
    """Loses every other invalidation in transit (numbered, never sent)."""

    def publish(self, plain: Any) -> None:
        super().publish(plain)
        if self._number % 2 == 0:
            self._outgoing.pop()


@contextlib.asynccontextmanager
async def processes(
    tmp_path: Path, url: str, channel_b: type[CacheChannel] = CacheChannel
) -> AsyncIterator[tuple[Process, Process, Storage]]:
    path = str(tmp_path / "store.sqlite")
    stores = [await open_sqlite(path, cursor_key=CURSOR_KEY) for _ in range(3)]
    a = Process(stores[0], through_redis(url))
    b = Process(stores[1], through_redis(url, channel_b))
    for process in (a, b):
        process.task = asyncio.create_task(process.channel.run())
    try:
        for brand in BRANDS:
            await a.cache.transact_write(
                [Update(BRAND_BY_ID.key(brand_id=brand), set={"name": "0"})]
            )
        await a.until_trusted()
        await b.until_trusted()
        # Each first hearing of the other may flush (its writes just now):
        # over before a test fills a cache.
        await b.heard_from(a)
        await a.heard_from(b)
        yield a, b, stores[2]
    finally:
        for process in (a, b):
            assert process.task is not None
            process.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await process.task
            await process.channel.close()
        for store in stores:
            await store.close()


async def _stale_reads(
    a: Process, b: Process, truth: Storage, rounds: int, bound: float = 0.1
) -> int:
    """The channel's round trip; a heartbeat more for a lost message."""
    return await stale_reads(a, b, truth, rounds, bound)


async def test_a_write_on_a_drops_bs_entry(redis_server: RedisServer, tmp_path: Path) -> None:
    async with processes(tmp_path, redis_server.url) as (a, b, truth):
        assert await _stale_reads(a, b, truth, 20) == 0
        assert sum(b.cache.stats.hits.values()) > 0  # positive control: B did serve from its cache


async def test_a_deaf_channel_is_caught(redis_server: RedisServer, tmp_path: Path) -> None:
    async with processes(tmp_path, redis_server.url, DeafChannel) as (a, b, truth):
        assert await _stale_reads(a, b, truth, 6) > 0


async def test_lost_messages_flush_b(redis_server: RedisServer, tmp_path: Path) -> None:
    async with processes(tmp_path, redis_server.url, CacheChannel) as (a, b, truth):
        a.channel.__class__ = LossyChannel
        assert await _stale_reads(a, b, truth, 10, bound=0.5) == 0
        assert b.channel.freshness.gaps >= 4


async def test_forged_messages_are_ignored(redis_server: RedisServer, tmp_path: Path) -> None:
    async with processes(tmp_path, redis_server.url) as (_a, b, truth):
        assert await b.name("b1") == "0"
        await truth.transact_write([Update(BRAND_BY_ID.key(brand_id="b1"), set={"name": "x"})])
        assert await b.name("b1") == "0"  # written behind the caches' back: B's entry stands
        plain = Invalidation(frozenset({BRAND_BY_ID.key(brand_id="b1")})).to_plain()
        body = json.dumps({"p": "forger", "n": 1, "s": 0, "i": plain}).encode()
        publisher = Redis.from_url(redis_server.url)
        try:
            for key in (b"wrong key" * 4, None):
                data = body if key is None else sign_body(key, CHANNEL, body, time.time())
                await publisher.publish(CHANNEL, data)
            await asyncio.sleep(0.3)
            assert b.channel.dropped == 2
            assert await b.name("b1") == "0"
            # Positive control: the same message, signed with the deployment's key.
            await publisher.publish(CHANNEL, sign_body(KEY, CHANNEL, body, time.time()))
            async with asyncio.timeout(5):
                while await b.name("b1") != "x":
                    await asyncio.sleep(0.01)
        finally:
            await publisher.aclose()


async def test_a_message_missed_before_a_publishers_first_flushes(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """A publisher first heard after B began listening whose previous
    invalidation was sent since then: B missed it, and flushes."""
    async with processes(tmp_path, redis_server.url) as (_a, b, truth):
        assert await b.name("b4") == "0"
        await truth.transact_write([Update(BRAND_BY_ID.key(brand_id="b4"), set={"name": "y"})])
        publisher = Redis.from_url(redis_server.url)
        try:
            for name, previous in (("quiet", 0.0), ("missed", time.time())):
                body = json.dumps({"p": name, "n": 3, "s": previous, "i": None}).encode()
                flushes = b.channel.freshness.flushes
                await publisher.publish(CHANNEL, sign_body(KEY, CHANNEL, body, time.time()))
                async with asyncio.timeout(5):
                    while b.channel.freshness.last_of(name) is None:
                        await asyncio.sleep(0.01)
                if name == "quiet":  # never published before: nothing missed
                    assert b.channel.freshness.flushes == flushes
                    assert await b.name("b4") == "0"
            assert b.channel.freshness.flushes == flushes + 1
            assert await b.name("b4") == "y"
        finally:
            await publisher.aclose()


async def test_redis_killed_reads_through_then_flushes(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    async with processes(tmp_path, redis_server.url) as (a, b, truth):
        assert await b.name("b2") == "0"
        redis_server.kill()
        async with asyncio.timeout(5):
            while b.channel.freshness.trusted():
                await asyncio.sleep(0.01)
        await a.rename("b2", "while-down")  # A cannot publish it
        assert await b.name("b2") == "while-down"  # 0 stale: B reads the store
        hits = sum(b.cache.stats.hits.values())
        await truth.transact_write([Update(BRAND_BY_ID.key(brand_id="b3"), set={"name": "behind"})])
        flushes = b.channel.freshness.flushes
        redis_server.start()
        await b.until_trusted()
        assert b.channel.freshness.flushes > flushes
        assert await b.name("b3") == "behind"
        assert await b.name("b3") == "behind"
        assert sum(b.cache.stats.hits.values()) > hits  # trusted again: served from the cache


@pytest.mark.parametrize("rounds", [200])
async def test_commit_to_drop_latency(
    redis_server: RedisServer, tmp_path: Path, rounds: int
) -> None:
    """Prints p50/p99 from A's acknowledged write to B's entry dropped (not asserted)."""
    async with processes(tmp_path, redis_server.url) as (a, b, _truth):
        latencies: list[float] = []
        for n in range(rounds):
            brand = BRANDS[n % len(BRANDS)]
            await b.name(brand)
            before = b.cache.stats.invalidations
            started = time.perf_counter()
            await a.rename(brand, f"l{n}")
            async with asyncio.timeout(5):
                while b.cache.stats.invalidations == before:
                    await asyncio.sleep(0.0005)
            latencies.append(time.perf_counter() - started)
        latencies.sort()
        p50 = latencies[len(latencies) // 2] * 1000
        p99 = latencies[int(len(latencies) * 0.99) - 1] * 1000
        print(f"\ncommit on A to drop on B, {rounds} writes: p50 {p50:.2f} ms, p99 {p99:.2f} ms")
        assert len(latencies) == rounds
