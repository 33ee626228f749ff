"""Alerts across processes through a real redis-server, and the fall-back to
the table when it dies (docs/design.md, "Alerts across processes")."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from redis.asyncio import Redis

from services.pipeline import Pipeline, PipelineSettings, Subscriber
from services.pipeline.live.messages import seal_message, sign_body
from services.pipeline.live.redis_transport import RedisTransport, channel
from services.pipeline.live.tailer import read_alerts_since
from storage import CursorCodec, Item
from storage.sqlite import open_sqlite
from tests._support.redis_server import RedisServer
from tests.services.pipeline._support import (
    CURSOR_KEY,
    eventually,
    minutes,
    new_brand,
    utcnow,
)
from tests.services.pipeline.test_service import counterfeit

pytestmark = pytest.mark.slow

_NEVER = timedelta(minutes=10)


@pytest.fixture
async def two_processes(
    tmp_path: Path, settings: PipelineSettings, redis_server: RedisServer
) -> AsyncIterator[tuple[Pipeline, Pipeline]]:
    """A and B on one SQLite file and one Redis. B's relay never polls and its
    table sweep is ten minutes apart, so B's subscribers hear of A's alerts
    through Redis, or through the tail only while Redis is down."""
    shared = replace(settings, redis_url=redis_server.url, redis_sweep_interval=_NEVER)
    stores = [await open_sqlite(tmp_path / "shared.db", cursor_key=CURSOR_KEY) for _ in range(2)]
    a = Pipeline(stores[0], shared, cursors=CursorCodec(CURSOR_KEY), clock=utcnow)
    b = Pipeline(
        stores[1],
        replace(shared, poll_interval=_NEVER),
        cursors=CursorCodec(CURSOR_KEY),
        clock=utcnow,
    )
    for pipeline in (a, b):
        await pipeline.start()
    try:
        await eventually(lambda: _connected(a, b))
        yield a, b
    finally:
        for pipeline in (a, b):
            await pipeline.stop()
        for store in stores:
            await store.close()


async def _connected(*pipelines: Pipeline) -> bool:
    return all(_transport(p).connected for p in pipelines)


def _transport(pipeline: Pipeline) -> RedisTransport:
    assert isinstance(pipeline.transport, RedisTransport)
    return pipeline.transport


def _received(transport: RedisTransport) -> list[str]:
    """The channel of every message the transport reads off Redis from now on."""
    channels: list[str] = []
    receive = transport._receive

    def counted(name: str, data: bytes) -> None:
        channels.append(name)
        receive(name, data)

    transport._receive = counted  # type: ignore[method-assign]
    return channels


async def _drain(subscriber: Subscriber, count: int, timeout: float) -> list[Item]:
    received: list[Item] = []
    while len(received) < count:
        item = await asyncio.wait_for(subscriber.next(), timeout)
        assert item is not None
        received.append(item)
    return received


async def test_an_alert_from_a_reaches_bs_subscriber_through_redis_once(
    two_processes: tuple[Pipeline, Pipeline], t0: datetime
) -> None:
    """Each alert is read off Redis by B (counted as B's listener reads it,
    none dropped), and B's subscriber hears of it once, whether Redis or a
    table sweep brought it first."""
    a, b = two_processes
    brand = await new_brand(a.storage)
    subscriber = await b.subscribe(brand)
    received = _received(_transport(b))
    for index in range(5):
        await counterfeit(a.storage, brand, t0 + minutes(index), a)
        await _drain(subscriber, 1, timeout=5)

        async def arrived(count: int = index + 1) -> bool:
            return len(received) == count

        await eventually(arrived)
    assert received == [channel(brand)] * 5
    assert len(subscriber) == 0
    assert _transport(b).dropped == 0
    assert b.relay.alerts.created == 0 and a.relay.alerts.created == 5
    assert _transport(b).outages == 0


async def test_the_last_subscriber_leaving_unsubscribes_the_channel(
    two_processes: tuple[Pipeline, Pipeline], redis_server: RedisServer
) -> None:
    _, b = two_processes
    brand = await new_brand(b.storage)
    client = Redis.from_url(redis_server.url)

    async def subscribers_of_channel() -> int:
        counts = await client.pubsub_numsub(channel(brand))
        return int(counts[0][1])

    try:
        first, second = await b.subscribe(brand), await b.subscribe(brand)
        assert await subscribers_of_channel() == 1
        b.unsubscribe(first)
        await asyncio.sleep(0)
        assert await subscribers_of_channel() == 1
        b.unsubscribe(second)

        async def gone() -> bool:
            return await subscribers_of_channel() == 0

        await eventually(gone)
    finally:
        await client.aclose()


async def test_redis_killed_mid_stream_loses_and_repeats_nothing(
    two_processes: tuple[Pipeline, Pipeline], redis_server: RedisServer, t0: datetime
) -> None:
    """200 alerts; SIGKILL after 60, restart on the same port after 130: B
    tails the table in between, catches up, and goes back to Redis."""
    a, b = two_processes
    brand = await new_brand(a.storage)
    subscriber = await b.subscribe(brand)
    received: list[Item] = []
    for index in range(200):
        if index == 60:
            redis_server.kill()
        if index == 130:
            redis_server.start()
        await counterfeit(a.storage, brand, t0 + minutes(index), a)
        received += await _drain(subscriber, 1, timeout=5)
    await eventually(lambda: _connected(a, b), timeout=15)
    await counterfeit(a.storage, brand, t0 + minutes(200), a)
    received += await _drain(subscriber, 1, timeout=2)
    stored, _ = await read_alerts_since(a.storage, brand, t0 - minutes(60), limit=1000)
    assert len(received) == len({item["id"] for item in received}) == 201
    assert {item["id"] for item in received} == {item["id"] for item in stored}
    assert _transport(b).outages == 1
    assert len(subscriber) == 0


async def test_a_malformed_message_is_dropped_and_the_next_alert_still_arrives(
    two_processes: tuple[Pipeline, Pipeline], redis_server: RedisServer, t0: datetime
) -> None:
    a, b = two_processes
    brand, other = await new_brand(a.storage), await new_brand(a.storage)
    subscriber = await b.subscribe(brand)
    client = Redis.from_url(redis_server.url)
    try:
        await client.publish(channel(brand), b"{not json")
        await client.publish(channel(brand), b'{"brandId": "%s", "id": "x"}' % other.encode())
    finally:
        await client.aclose()
    await counterfeit(a.storage, brand, t0, a)
    (item,) = await _drain(subscriber, 1, timeout=2)
    assert item["brandId"] == brand and item["type"] == "HASH_TAMPERING"
    assert len(subscriber) == 0
    assert _transport(b).connected and _transport(b).outages == 0


async def test_a_deployment_prefix_names_its_channels(
    tmp_path: Path, settings: PipelineSettings, redis_server: RedisServer
) -> None:
    """PROOFGATE_REDIS_PREFIX: two deployments on one Redis use disjoint channels."""
    staging = replace(settings, redis_url=redis_server.url, redis_prefix="staging:")
    store = await open_sqlite(tmp_path / "staging.db", cursor_key=CURSOR_KEY)
    pipeline = Pipeline(store, staging, cursors=CursorCodec(CURSOR_KEY), clock=utcnow)
    client = Redis.from_url(redis_server.url)
    await pipeline.start()
    try:
        brand = await new_brand(store)
        await pipeline.subscribe(brand)

        async def numsub(name: str) -> int:
            return int((await client.pubsub_numsub(name))[0][1])

        async def subscribed() -> bool:
            return await numsub(f"staging:alerts:{brand}") == 1

        await eventually(subscribed)
        assert await numsub(channel(brand)) == 0, "nothing on the default prefix"
    finally:
        await pipeline.stop()
        await client.aclose()
        await store.close()


def _bad_messages(key: bytes, name: str, other: str, real: Item, now: float) -> list[bytes]:
    """What someone who can publish to the Redis may send (issue 27, row 4)."""
    bogus = {**real, "type": "BOGUS", "severity": "APOCALYPTIC", "detectedAt": "yesterday"}
    head = json.dumps({**real, "details": None}).encode().rpartition(b"null")
    deep = head[0] + b"[" * 25_000 + b"]" * 25_000 + head[2]
    return [
        json.dumps(bogus).encode(),  # unsigned, as before
        seal_message(b"\0" * 32, name, real, now),  # forged: not the deployment's key
        seal_message(key, name, bogus, now),  # signed but not an alert
        seal_message(key, name, {**real, "recordedAt": "not a time"}, now),
        seal_message(key, name, {**real, "productId": "another"}, now),  # id names another
        sign_body(key, name, deep, now),  # signed, but nested 25,000 deep
        seal_message(key, name, real, now - 3600),  # a replay of an old alert
        seal_message(key, other, real, now),  # another brand's channel's message
        b"\xff" * 70_000,
    ]


async def test_row4_forged_or_malformed_messages_never_reach_a_subscriber(
    two_processes: tuple[Pipeline, Pipeline], redis_server: RedisServer, t0: datetime
) -> None:
    """Each is counted and dropped; the subscription stays open and the next
    real alert, published after them, is the first thing it receives."""
    a, b = two_processes
    brand, other = await new_brand(a.storage), await new_brand(a.storage)
    subscriber = await b.subscribe(brand)
    await counterfeit(a.storage, brand, t0, a)
    (real,) = await _drain(subscriber, 1, timeout=2)
    transport = _transport(b)
    client = Redis.from_url(redis_server.url)
    try:
        bad = _bad_messages(transport._key, channel(brand), channel(other), real, time.time())
        for message in bad:
            assert await client.publish(channel(brand), message) == 1
        await eventually(lambda: _dropped(transport, len(bad)))
    finally:
        await client.aclose()
    await counterfeit(a.storage, brand, t0 + minutes(1), a)
    (after,) = await _drain(subscriber, 1, timeout=2)
    assert after["id"] != real["id"] and after["type"] == "HASH_TAMPERING"
    assert len(subscriber) == 0 and not subscriber.closed
    assert transport.outages == 0 and transport.connected


async def _dropped(transport: RedisTransport, count: int) -> bool:
    return transport.dropped == count


async def test_each_publisher_is_connected_before_its_first_alert(
    two_processes: tuple[Pipeline, Pipeline], redis_server: RedisServer
) -> None:
    """A connection made by the first publish would take its handshake's
    turns of the loop among the fan-out's (docs/design.md, Alert fan-out):
    each process's publisher has one, its last command its first PING,
    while neither has published anything."""
    client = Redis.from_url(redis_server.url)

    async def publishers() -> bool:
        connections = await client.client_list()
        return [c["cmd"] for c in connections].count("ping") == 2

    try:
        await eventually(publishers)
        assert all(_transport(p).unannounced == 0 for p in two_processes)
    finally:
        await client.aclose()
