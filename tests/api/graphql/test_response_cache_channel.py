"""The response cache hears invalidations from other processes through the
storage cache's channel and a real redis-server: two caches over one SQLite
file, B's answers tagged by what B read (docs/design.md, Response cache)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from api.graphql.response_cache import ResponseCache, ResponseKey
from storage import Storage
from storage.access_patterns import BRAND_BY_ID
from storage.cache import ReadLog, recording
from tests._support.redis_server import RedisServer
from tests.services.pipeline.live._cache_processes import BRANDS, Process
from tests.services.pipeline.live.test_cache_channel import processes

BOUND_SECONDS = 0.1
"""The channel's documented bound (docs/design.md, Cache invalidations across processes)."""


def _responses(b: Process, *, attached: bool = True) -> ResponseCache:
    responses = ResponseCache(1 << 20, 600.0, trusted=b.cache.freshness.trusted)
    if attached:
        b.cache.add_dependent(responses)
    return responses


async def _answer(b: Process, responses: ResponseCache, brand: str) -> str:
    """B's answer naming ``brand``: kept, or read (through B's storage cache) and kept."""
    key = ResponseKey("document", "Name", brand.encode(), "ANONYMOUS||")
    kept = responses.get(key)
    if kept is not None:
        return kept.data.decode()
    log, start = ReadLog(), responses.begin()
    try:
        with recording(log):
            name = await b.name(brand)
        responses.put(key, name.encode(), None, log, start)
    finally:
        responses.end()
    return name


async def _stale_answers(
    a: Process, b: Process, responses: ResponseCache, truth: Storage, rounds: int
) -> int:
    stale = 0
    for n in range(1, rounds + 1):
        brand = BRANDS[n % len(BRANDS)]
        await _answer(b, responses, brand)
        await _answer(b, responses, brand)  # a hit
        await a.rename(brand, f"answer {n}")
        await asyncio.sleep(BOUND_SECONDS)  # the documented bound; not a readiness wait
        expected = await truth.get(BRAND_BY_ID, brand_id=brand)
        assert expected is not None
        stale += await _answer(b, responses, brand) != expected["name"]
    return stale


async def test_a_write_on_a_drops_bs_answer(redis_server: RedisServer, tmp_path: Path) -> None:
    async with processes(tmp_path, redis_server.url) as (a, b, truth):
        responses = _responses(b)
        assert await _stale_answers(a, b, responses, truth, 12) == 0
        assert sum(responses.stats.hits.values()) >= 12  # positive control: B served answers
        assert responses.stats.dropped >= 12


async def test_an_answer_cache_that_is_no_dependent_is_caught(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """The planted fault: B's answers never hear the storage cache."""
    async with processes(tmp_path, redis_server.url) as (a, b, truth):
        responses = _responses(b, attached=False)
        assert await _stale_answers(a, b, responses, truth, 4) > 0


async def test_a_flush_and_an_outage_reach_the_answers(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    async with processes(tmp_path, redis_server.url) as (_a, b, _truth):
        responses = _responses(b)
        await _answer(b, responses, "b1")
        assert len(responses) == 1
        b.cache.flush()  # what the channel does when it hears again
        assert len(responses) == 0 and responses.stats.flushes == 1
        await _answer(b, responses, "b1")
        assert len(responses) == 1
        redis_server.kill()
        async with asyncio.timeout(10):
            while b.cache.freshness.trusted():
                await asyncio.sleep(0.01)
        key = ResponseKey("document", "Name", b"b1", "ANONYMOUS||")
        assert responses.get(key) is None  # untrusted: nothing is served
