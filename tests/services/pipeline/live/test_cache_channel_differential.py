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
from hypothesis.errors import NoSuchExample

from services.pipeline.live.cache_channel import CacheChannel
from storage import Page, Storage
from storage.sqlite import open_sqlite
from tests._support.redis_server import RedisServer
from tests.services.pipeline.live._cache_processes import (
    CURSOR_KEY,
    ChannelFactory,
    DeafChannel,
    DeafLog,
    Process,
    through_redis,
    through_the_table,
)
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


KILLS: list[int] = []
"""Each SIGKILL a history made: the positive control that Redis went down."""
HITS: list[int] = []
"""B's cache hits per history: the positive control that B served from it."""
UNTRUSTED: list[Any] = []
"""Each read B made while it did not trust its channel, Redis up (it read
the store): the positive control that a planted fault could show."""
PATIENT_SECONDS = 60.0
"""``deaf_after`` of the planted-fault test's channels. With the production
second, a loaded machine brought B's own heartbeat back late, B stopped
trusting, read through and flushed when it heard again, so the fault was
never served and no history caught it."""


def _down(redis: RedisServer | None) -> bool:
    return redis is not None and redis.process is not None and redis.process.poll() is not None


async def _outage(step: Any, redis: RedisServer | None, a: Process, b: Process) -> None:
    """Redis SIGKILLed (until B stops trusting it) or started again (until
    both trust it); nothing for a history without a server to kill."""
    if redis is None:
        return
    down = _down(redis)
    if step[0] == "kill" and not down:
        redis.kill()
        KILLS.append(1)
        # A planted channel never stops trusting: then go on after 2 s.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(2):
                while b.channel.freshness.trusted():
                    await asyncio.sleep(0.005)
    elif step[0] == "restart" and down:
        redis.start()
        await a.until_trusted()
        await b.until_trusted()


async def _run(
    history: Sequence[Any],
    channel_a: ChannelFactory,
    channel_b: ChannelFactory,
    redis: RedisServer | None = None,
) -> list[str]:
    with tempfile.TemporaryDirectory() as directory:
        path = str(Path(directory) / "store.sqlite")
        stores = [await open_sqlite(path, cursor_key=CURSOR_KEY) for _ in range(3)]
        a, b = Process(stores[0], channel_a), Process(stores[1], channel_b)
        tasks = [asyncio.create_task(p.channel.run()) for p in (a, b)]
        wrong: list[str] = []
        cursors: dict[str, Any] = {}
        try:
            await a.until_trusted()
            await b.until_trusted()
            await b.heard_from(a)  # its first hearing of A may flush: over first
            for step in history:
                if step[0] in _READS and not _down(redis) and not b.channel.freshness.trusted():
                    UNTRUSTED.append(step)
                if step[0] in _READS:
                    wrong.append(await _compare(b, stores[2], step, cursors) or "")
                    continue
                if step[0] in ("kill", "restart"):
                    await _outage(step, redis, a, b)
                    continue
                await apply(a.cache, None, Clock(), step)
                if b.channel.freshness.trusted() and not _down(redis):
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


def _mismatches(
    history: Sequence[Any],
    url: str,
    channel_b: type[CacheChannel],
    redis: RedisServer | None = None,
) -> list[str]:
    return _mismatches_through(history, through_redis(url), through_redis(url, channel_b), redis)


def _mismatches_through(
    history: Sequence[Any],
    channel_a: ChannelFactory,
    channel_b: ChannelFactory,
    redis: RedisServer | None = None,
) -> list[str]:
    try:
        return asyncio.run(_run(history, channel_a, channel_b, redis))
    finally:
        if redis is not None and _down(redis):
            redis.start()  # the next history begins with Redis up


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
    """B hears A (numbers, heartbeats) and applies nothing. Both channels wait
    ``PATIENT_SECONDS`` for their own heartbeat, so B trusts its channel at
    every read however loaded the machine (checked), and the one difference
    from the real channel's run is what B applies."""
    url = redis_server.url

    def mismatches(history: Sequence[Any], channel_b: type[CacheChannel]) -> list[str]:
        patient = through_redis(url, deaf_after=PATIENT_SECONDS)
        return _mismatches_through(
            history, patient, through_redis(url, channel_b, deaf_after=PATIENT_SECONDS)
        )

    UNTRUSTED.clear()
    failing: list[Any] | None = None
    with contextlib.suppress(NoSuchExample):
        failing = find(
            histories,
            lambda history: bool(mismatches(history, DeafChannel)),
            settings=settings(
                max_examples=200, database=None, phases=[Phase.generate], deadline=None
            ),
            random=Random(0),
        )
    assert UNTRUSTED == [], "B read the store, not its cache: the fault could not show"
    assert failing, "no history caught a channel that applies nothing"
    assert mismatches(failing, CacheChannel) == []
    assert UNTRUSTED == []


outages = st.lists(
    st.one_of(steps, st.just(("kill",)), st.just(("restart",))), min_size=2, max_size=10
).filter(lambda history: ("kill",) in history)


def test_redis_killed_mid_history_serves_nothing_stale(redis_server: RedisServer) -> None:
    """Writes on A while Redis is down reach B's readers from the store; B
    flushes when Redis is back."""

    @settings(
        max_examples=6,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    @given(outages)
    def check(history: list[Any]) -> None:
        assert _mismatches(history, redis_server.url, CacheChannel, redis_server) == []

    KILLS.clear()
    check()
    assert len(KILLS) >= 6


class StubbornChannel(CacheChannel):
    """The planted fault: trusts the channel whatever happens to Redis."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.freshness.deaf = lambda: None  # type: ignore[method-assign]
        self.freshness.trusted = lambda: True  # type: ignore[method-assign]


def test_a_channel_trusted_through_an_outage_is_caught(redis_server: RedisServer) -> None:
    failing = find(
        outages,
        lambda history: bool(_mismatches(history, redis_server.url, StubbornChannel, redis_server)),
        settings=settings(max_examples=60, database=None, phases=[Phase.generate], deadline=None),
        random=Random(0),
    )
    assert failing
    assert _mismatches(failing, redis_server.url, CacheChannel, redis_server) == []


def test_through_the_table_b_answers_as_the_store_after_every_write_on_a() -> None:
    """The same histories with no Redis: A's invalidations reach B only
    through the store's own log (``CacheLog``, AP35)."""

    @settings(
        max_examples=20,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(histories)
    def check(history: list[Any]) -> None:
        assert _mismatches_through(history, through_the_table(), through_the_table()) == []

    HITS.clear()
    check()
    assert sum(HITS) > 0


def test_a_log_that_applies_nothing_is_caught() -> None:
    failing = find(
        histories,
        lambda history: bool(
            _mismatches_through(history, through_the_table(), through_the_table(DeafLog))
        ),
        settings=settings(max_examples=200, database=None, phases=[Phase.generate], deadline=None),
        random=Random(0),
    )
    assert failing
    assert _mismatches_through(failing, through_the_table(), through_the_table()) == []
