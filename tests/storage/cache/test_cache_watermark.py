"""The watermark in one process: a pattern strong only for freshness (AP09)
is served from the cache only when every write committed before the read
began has been applied here (docs/design.md, Storage cache, The watermark).

Each case is forced: a stand-in store commits a write and then holds its
answer, so the write is committed and its invalidation not yet applied
while a read begins.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator, Awaitable

import pytest

from storage import Put, Storage
from storage.access_patterns import PRODUCT_RECORD, PROVENANCE_CHAIN
from storage.cache import CachedStorage, LocalFreshness, Rule, rule_of
from storage.sqlite import open_sqlite
from storage.trace import Trace, tracing
from tests._support.held_writes import HeldWrites

TENANT = "t"


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


class Careless(CachedStorage):
    """The planted fault: its own writes in flight never hold it back."""

    def settled_through(self) -> float:
        return math.inf


def event(sequence: int) -> Put:
    return Put({"PK": "PRODUCT#w", "SK": f"EVENT#{sequence:020d}", "sequence": sequence})


@pytest.fixture
async def inner() -> AsyncIterator[Storage]:
    storage = await open_sqlite(":memory:", cursor_key=bytes(range(32)))
    await storage.transact_write([event(1)])
    yield storage
    await storage.close()


async def calls(read: Awaitable[object]) -> int:
    trace = Trace()
    with tracing(trace):
        await read
    return trace.storage_calls


async def chain(storage: Storage) -> list[int]:
    page = await storage.query(PROVENANCE_CHAIN, {"product_id": "w"}, tenant=TENANT)
    return [int(item["sequence"]) for item in page.items]


async def _reads_while_a_write_is_committed_but_not_applied(
    cache: CachedStorage, held: HeldWrites, clock: Clock
) -> tuple[list[int], int]:
    """A second event is committed; the read begins a second after the
    write did, before its invalidation: what it answers, with how many calls."""
    assert await chain(cache) == [1]
    assert await calls(chain(cache)) == 0  # caught up: served from the cache
    writing = asyncio.create_task(cache.transact_write([event(2)]))
    await held.committed.wait()
    clock.now += 1.0
    trace = Trace()
    with tracing(trace):
        answer = await chain(cache)
    held.release.set()
    await writing
    assert await chain(cache) == [1, 2]  # applied: caught up again
    assert await calls(chain(cache)) == 0
    return answer, trace.storage_calls


def _cache(kind: type[CachedStorage], held: HeldWrites, clock: Clock) -> CachedStorage:
    return kind(
        held,
        max_bytes=1 << 20,
        ttl_seconds=60.0,
        clock=clock,
        freshness=LocalFreshness(sole_writer=True),
    )


async def test_a_sole_writer_serves_freshness_only_once_its_writes_are_applied(
    inner: Storage,
) -> None:
    clock = Clock()
    held = HeldWrites(inner)
    cache = _cache(CachedStorage, held, clock)
    assert rule_of(PROVENANCE_CHAIN) is Rule.FRESHNESS
    # Behind: the write in flight began before the read; the store answers.
    assert await _reads_while_a_write_is_committed_but_not_applied(cache, held, clock) == (
        [1, 2],
        1,
    )
    assert cache.settled_through() == math.inf


async def test_the_planted_fault_serves_the_stale_chain(inner: Storage) -> None:
    clock = Clock()
    held = HeldWrites(inner)
    cache = _cache(Careless, held, clock)
    assert await _reads_while_a_write_is_committed_but_not_applied(cache, held, clock) == ([1], 0)


async def test_without_the_sole_writers_word_freshness_passes_through(inner: Storage) -> None:
    cache = CachedStorage(inner, max_bytes=1 << 20, ttl_seconds=60.0)
    for _ in range(2):
        assert await calls(chain(cache)) == 1
    assert len(cache.entries) == 0


async def test_the_verifications_record_is_never_kept(inner: Storage) -> None:
    """AP33's one reader writes the product's META, inside its window, right
    after: the rule passes it through even for a sole writer."""
    cache = _cache(CachedStorage, HeldWrites(inner), Clock())
    assert rule_of(PRODUCT_RECORD) is Rule.REWRITTEN
    for _ in range(2):
        read = cache.query(PRODUCT_RECORD, {"product_id": "w"}, tenant=TENANT)
        assert await calls(read) == 1
    assert len(cache.entries) == 0


async def test_a_cancelled_write_holds_the_watermark_until_its_second_drop(
    inner: Storage,
) -> None:
    clock = Clock()
    held = HeldWrites(inner)
    cache = CachedStorage(
        held,
        max_bytes=1 << 20,
        ttl_seconds=60.0,
        clock=clock,
        freshness=LocalFreshness(sole_writer=True),
        doubt_seconds=0.05,
    )
    heard: list[object] = []
    cache.on_invalidation(heard.append)
    writing = asyncio.create_task(cache.transact_write([event(3)]))
    await held.committed.wait()
    writing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await writing
    assert cache.settled_through() == clock.now  # in doubt: held back
    assert len(heard) == 1
    async with asyncio.timeout(5):
        while cache.settled_through() != math.inf:  # the second drop, 50 ms on
            await asyncio.sleep(0.01)
    assert len(heard) == 2  # the listeners (the channel) heard it again
