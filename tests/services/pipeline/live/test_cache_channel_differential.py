"""The storage cache's differential across processes: Hypothesis
interleavings of every read shape and write kind (puts, updates, GSI moves,
deletes, transactions, conditional failures) written on A and read on B,
two caches over one SQLite file whose invalidations travel only through a
real redis-server, compared with the uncached store after every
acknowledged write once B has heard it. A planted fault, B's channel
hearing but not applying, must be caught
(docs/design.md, Cache invalidations across processes)."""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from collections.abc import Sequence
from pathlib import Path
from random import Random
from typing import Any

from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from services.pipeline.live.cache_channel import CacheChannel
from storage import Page, Storage
from storage.sqlite import open_sqlite
from tests._support.redis_server import RedisServer
from tests.services.pipeline.live._cache_processes import CURSOR_KEY, DeafChannel, Process
from tests.storage.cache.test_cache_differential import (
    Clock,
    apply,
    read,
    reads,
    shape,
    single,
    writes,
)
from tests.storage.cache.test_cache_differential import _every_read as every_read

steps = st.one_of(
    reads,
    single,
    st.tuples(st.just("txn"), st.lists(writes, min_size=2, max_size=3)),
    st.tuples(st.just("cond"), writes, st.booleans()),
)
histories = st.lists(steps, min_size=1, max_size=10)
_READS = frozenset({"get_brand", "get_product", "batch", "page", "page2", "record"})


async def _compare(b: Process, twin: Storage, step: Any, cursors: dict[str, Any]) -> str | None:
    got = await read(b.cache, step, cursors)
    want = await read(twin, step, cursors)
    if step[0] == "page" and isinstance(got, Page):
        cursors[step[1]] = got.end_cursor
    return None if shape(got) == shape(want) else f"{step}: {shape(got)} != {shape(want)}"


HITS: list[int] = []
"""B's cache hits per history: the positive control that B served from it."""


async def _run(history: Sequence[Any], url: str, channel_b: type[CacheChannel]) -> list[str]:
    with tempfile.TemporaryDirectory() as directory:
        path = str(Path(directory) / "store.sqlite")
        stores = [await open_sqlite(path, cursor_key=CURSOR_KEY) for _ in range(3)]
        a, b = Process(stores[0], url, CacheChannel), Process(stores[1], url, channel_b)
        tasks = [asyncio.create_task(p.channel.run()) for p in (a, b)]
        wrong: list[str] = []
        cursors: dict[str, Any] = {}
        try:
            await a.until_trusted()
            await b.until_trusted()
            for step in history:
                if step[0] in _READS:
                    wrong.append(await _compare(b, stores[2], step, cursors) or "")
                    continue
                await apply(a.cache, None, Clock(), step)
                await b.heard_from(a)  # the bound: B heard every message A numbered
                for again in every_read():
                    wrong.append(await _compare(b, stores[2], again, cursors) or "")
            HITS.append(sum(b.cache.stats.hits.values()))
        finally:
            for task in tasks:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            for process in (a, b):
                await process.channel.close()
            for store in stores:
                await store.close()
        return [w for w in wrong if w]


def _mismatches(history: Sequence[Any], url: str, channel_b: type[CacheChannel]) -> list[str]:
    return asyncio.run(_run(history, url, channel_b))


def test_b_answers_as_the_store_after_every_write_on_a(redis_server: RedisServer) -> None:
    @settings(
        max_examples=20,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(histories)
    def check(history: list[Any]) -> None:
        assert _mismatches(history, redis_server.url, CacheChannel) == []

    HITS.clear()
    check()
    assert sum(HITS) > 0


def test_a_channel_that_applies_nothing_is_caught(redis_server: RedisServer) -> None:
    failing = find(
        histories,
        lambda history: bool(_mismatches(history, redis_server.url, DeafChannel)),
        settings=settings(max_examples=200, database=None, phases=[Phase.generate], deadline=None),
        random=Random(0),
    )
    assert failing
    assert _mismatches(failing, redis_server.url, CacheChannel) == []
