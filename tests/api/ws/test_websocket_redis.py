"""Alerts across two real ``proofgate serve`` processes through a real
redis-server: an alert caused on A reaches B's subscriber once, also when
Redis is SIGKILLed mid-stream and restarted (docs/design.md, "Alerts across processes")."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from _live import ADMIN_KEY, Gateway, Inbox, Socket

from tests._support.redis_server import RedisServer

pytestmark = pytest.mark.slow


@pytest.fixture
async def two_gateways(
    tmp_path: Path, redis_server: RedisServer
) -> AsyncIterator[tuple[Gateway, Gateway]]:
    """Two processes on one SQLite file and one Redis. B's relay never polls,
    so what B's subscribers receive was written by A."""
    env = {"PROOFGATE_REDIS_URL": redis_server.url}
    a = await Gateway(tmp_path, **env).start()
    b = await Gateway(tmp_path, PROOFGATE_RELAY_POLL_MS="600000", **env).start()
    try:
        yield a, b
    finally:
        await a.stop()
        await b.stop()


async def _subscribed(a: Gateway, b: Gateway) -> tuple[Inbox, str, dict[str, str], str, str]:
    brand, key = await a.brand()
    socket = await Socket.open(b, key)
    inbox = Inbox(socket)
    operation = await socket.subscribe(brand)
    await b.wait_for_subscriptions(1)
    product = await a.product(brand, key, claimed=True)
    return inbox, operation, product, brand, key


async def test_an_alert_caused_on_a_reaches_bs_subscriber_through_redis_once(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """The table tail is a minute apart here, and the sweep five seconds: only
    Redis brings the alerts within half a second."""
    env = {"PROOFGATE_REDIS_URL": redis_server.url, "PROOFGATE_TAIL_INTERVAL_MS": "60000"}
    a = await Gateway(tmp_path, **env).start()
    b = await Gateway(tmp_path, PROOFGATE_RELAY_POLL_MS="600000", **env).start()
    try:
        inbox, operation, product, brand, key = await _subscribed(a, b)
        received: list[dict[str, Any]] = []
        for _ in range(5):
            await a.dispute(product)
            # B tails the table once a minute: an alert within the wait came through Redis.
            received.append(await inbox.alert(operation, timeout=3))
        stored = await a.alerts(brand, key)
        await inbox.closes_with(operation, await a.closing_alert(brand, key))
        assert [alert["id"] for alert in received] == [alert["id"] for alert in stored]
        await inbox.socket.close()
    finally:
        await a.stop()
        await b.stop()


async def test_redis_killed_mid_stream_every_alert_arrives_once(
    two_gateways: tuple[Gateway, Gateway], redis_server: RedisServer
) -> None:
    """SIGKILL after a quarter of the alerts, restart after half: B tails the
    table (every 100 ms) in between and goes back to Redis after it."""
    a, b = two_gateways
    inbox, operation, product, brand, key = await _subscribed(a, b)
    received: list[dict[str, Any]] = []
    for index in range(40):
        if index == 10:
            redis_server.kill()
        if index == 20:
            redis_server.start()
        await a.dispute(product)
        received.append(await inbox.alert(operation, timeout=5))
    stored = await a.alerts(brand, key)
    await inbox.closes_with(operation, await a.closing_alert(brand, key))
    assert len(stored) == 40
    assert [alert["id"] for alert in received] == [alert["id"] for alert in stored]
    metrics = await b.client.get("/metrics", headers={"Authorization": f"Bearer {ADMIN_KEY}"})
    assert 'proofgate_redis_outages_total{part="alerts"} 1.0' in metrics.text
    await inbox.socket.close()
