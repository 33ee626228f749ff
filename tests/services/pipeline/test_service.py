from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from domain.enums import ScanResult
from domain.errors import BadUserInput, InvalidCursor
from services.pipeline import Pipeline, PipelineSettings, Subscriber
from services.pipeline.live.transport import LocalTransport
from storage import CursorCodec, Item, Storage
from storage.sqlite import open_sqlite
from tests.services.pipeline._support import (
    CURSOR_KEY,
    Product,
    alerts,
    eventually,
    minutes,
    new_brand,
    record_scan,
    utcnow,
)

TENANT = "brand:test"


async def next_alert(subscriber: Subscriber, timeout: float = 3.0) -> Item:
    item = await asyncio.wait_for(subscriber.next(), timeout)
    assert item is not None
    return item


async def counterfeit(
    storage: Storage, brand: str, at: datetime, pipeline: Pipeline | None = None
) -> None:
    """One HASH_TAMPERING alert on a fresh product."""
    await record_scan(
        storage, Product(brand, at - timedelta(days=1)), at, pipeline, result=ScanResult.COUNTERFEIT
    )


async def test_a_subscriber_gets_the_alert_the_relay_writes(
    storage: Storage, pipeline: Pipeline, t0: datetime
) -> None:
    brand, other = await new_brand(storage), await new_brand(storage)
    subscriber = await pipeline.subscribe(brand)
    await counterfeit(storage, other, t0, pipeline)
    await counterfeit(storage, brand, t0, pipeline)
    item = await next_alert(subscriber)
    assert (item["brandId"], item["type"]) == (brand, "HASH_TAMPERING")
    pipeline.unsubscribe(subscriber)
    assert pipeline.broker.watched() == []


async def test_alerts_stored_before_subscribing_are_not_sent_live(
    storage: Storage, pipeline: Pipeline, t0: datetime
) -> None:
    brand = await new_brand(storage)
    await counterfeit(storage, brand, t0, pipeline)
    await eventually(lambda: _count(storage, brand, 1))
    subscriber = await pipeline.subscribe(brand)
    assert await pipeline.tailer.poll() == 0
    await counterfeit(storage, brand, t0 + minutes(1), pipeline)
    assert (await next_alert(subscriber))["detectedAt"].endswith("12:01:00.000000Z")


async def _count(storage: Storage, brand: str, expected: int) -> bool:
    return len(await alerts(storage, brand)) == expected


async def test_replay_returns_the_alerts_after_a_cursor_oldest_first(
    storage: Storage, pipeline: Pipeline, t0: datetime
) -> None:
    brand = await new_brand(storage)
    for index in range(5):
        await counterfeit(storage, brand, t0 + minutes(index), pipeline)
    await eventually(lambda: _count(storage, brand, 5))
    newest_first = await alerts(storage, brand)
    cursor = pipeline.cursor(newest_first[3], TENANT)
    replayed = await pipeline.replay(brand, cursor, TENANT)
    assert [item["id"] for item in replayed] == [item["id"] for item in reversed(newest_first[:3])]
    assert await pipeline.replay(brand, pipeline.cursor(newest_first[0], TENANT), TENANT) == []


async def test_replay_refuses_foreign_and_forged_cursors(
    storage: Storage, pipeline: Pipeline, t0: datetime
) -> None:
    brand, other = await new_brand(storage), await new_brand(storage)
    await counterfeit(storage, brand, t0, pipeline)
    await eventually(lambda: _count(storage, brand, 1))
    cursor = pipeline.cursor((await alerts(storage, brand))[0], TENANT)
    with pytest.raises(InvalidCursor):
        await pipeline.replay(other, cursor, TENANT)
    with pytest.raises(InvalidCursor):
        await pipeline.replay(brand, cursor, "brand:someone-else")
    with pytest.raises(InvalidCursor):
        await pipeline.replay(brand, cursor[:-2] + "AA", TENANT)


async def test_replay_refuses_a_backlog_longer_than_its_limit(
    storage: Storage, t0: datetime
) -> None:
    small = Pipeline(
        storage, PipelineSettings(replay_max=2), cursors=CursorCodec(CURSOR_KEY), clock=utcnow
    )
    await small.start()
    try:
        brand = await new_brand(storage)
        for index in range(4):
            await counterfeit(storage, brand, t0 + minutes(index), small)
        await eventually(lambda: _count(storage, brand, 4))
        oldest = (await alerts(storage, brand))[-1]
        with pytest.raises(BadUserInput, match="More than 2 alerts"):
            await small.replay(brand, small.cursor(oldest, TENANT), TENANT)
    finally:
        await small.stop()


@pytest.fixture
async def two_processes(
    tmp_path: Path, settings: PipelineSettings
) -> AsyncIterator[tuple[Pipeline, Pipeline]]:
    """Two pipelines on one SQLite file, each with its own connections, as two
    gateway processes have. B runs nothing: the test polls its tailer, as
    ``Tailer.run`` does every ``tail_interval``, so whatever B's subscribers
    receive came through the table, and through which poll is known."""
    path = tmp_path / "shared.db"
    stores = [await open_sqlite(path, cursor_key=CURSOR_KEY) for _ in range(2)]
    a, b = (
        Pipeline(store, settings, cursors=CursorCodec(CURSOR_KEY), clock=utcnow) for store in stores
    )
    await a.start()
    try:
        yield a, b
    finally:
        await a.stop()
        await b.stop()
        for store in stores:
            await store.close()


async def test_an_alert_written_by_one_process_reaches_a_subscriber_of_another(
    two_processes: tuple[Pipeline, Pipeline], t0: datetime
) -> None:
    """Delivered by B's first tail poll after A stored it: so within one
    ``tail_interval`` of the commit, however slow the machine."""
    a, b = two_processes
    brand = await new_brand(a.storage)
    subscriber = await b.subscribe(brand)
    for index in range(2):
        await counterfeit(a.storage, brand, t0 + minutes(index), a)
        await eventually(lambda count=index + 1: _count(a.storage, brand, count))
        assert len(subscriber) == 0
        assert await b.tailer.poll() == 1
        assert len(subscriber) == 1
        item = await next_alert(subscriber)
        assert (item["brandId"], item["detectedAt"][11:16]) == (brand, f"12:0{index}")
        assert await b.tailer.poll() == 0
    assert b.relay.alerts.created == 0 and a.relay.alerts.created == 2


class _SwallowingTransport(LocalTransport):
    """Waits in ``watch`` until the test lets it finish, then returns even if
    its task was cancelled meanwhile: what Python 3.11's ``asyncio.wait_for``
    does when its future completes in the turn the task is cancelled (redis-py
    sends every command under one)."""

    def __init__(self) -> None:
        self.waiting = asyncio.Event()
        self.confirm = asyncio.get_running_loop().create_future()

    async def watch(self, brand_id: str) -> None:
        self.waiting.set()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(self.confirm)


async def test_a_subscription_cancelled_while_a_wait_below_swallows_it_is_removed(
    storage: Storage,
) -> None:
    """docs/design.md, Alerts across processes: the cancellation still
    counted by the task is raised, and the registration goes with it. The
    control: the same wait not cancelled returns a live subscriber."""
    transport = _SwallowingTransport()
    pipeline = Pipeline(
        storage,
        PipelineSettings(),
        cursors=CursorCodec(CURSOR_KEY),
        clock=utcnow,
        transport=transport,
    )
    transport.confirm.set_result(None)
    live = await pipeline.subscribe("brand-1")
    assert pipeline.broker.subscription_count == 1
    pipeline.unsubscribe(live)

    transport.confirm = asyncio.get_running_loop().create_future()
    transport.waiting.clear()
    subscribing = asyncio.create_task(pipeline.subscribe("brand-1"))
    await transport.waiting.wait()
    assert pipeline.broker.subscription_count == 1
    subscribing.cancel()
    transport.confirm.set_result(None)
    with pytest.raises(asyncio.CancelledError):
        await subscribing
    assert pipeline.broker.subscription_count == 0
