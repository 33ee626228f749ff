"""threatAlerts over real WebSockets against a real ``proofgate serve`` process."""

from __future__ import annotations

import asyncio
import base64
import os
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from _live import (
    ADMIN_KEY,
    LEGACY_WS,
    RECALL,
    TRANSPORT_WS,
    VERIFY,
    Closed,
    Gateway,
    Inbox,
    Socket,
    free_port,
)
from websockets.asyncio.client import connect

from api.app import create_app
from api.settings.gateway import Settings
from api.settings.limits import Limits
from domain.signing import SigningKey
from domain.threats import product_recall
from services.pipeline import PipelineSettings
from services.pipeline.alerts.records import alert_item
from storage.dynamodb import create_table

REGION = "us-east-1"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
async def gateway(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Gateway]:
    served = await Gateway(tmp_path_factory.mktemp("websocket")).start()
    yield served
    await served.stop()


async def test_live_alerts_are_filtered_by_brand_severity_and_type(gateway: Gateway) -> None:
    (mine, key), (theirs, their_key) = await gateway.brand(), await gateway.brand()
    socket = await Socket.open(gateway, key)
    inbox = Inbox(socket)
    everything = await socket.subscribe(mine)
    serious = await socket.subscribe(mine, min="HIGH")
    recalls = await socket.subscribe(mine, types=["PRODUCT_RECALL"])
    other = await Socket.open(gateway, their_key)
    other_inbox = Inbox(other)
    their_everything = await other.subscribe(theirs)
    await gateway.wait_for_subscriptions(4)

    product = await gateway.product(mine, key, claimed=True)
    their_product = await gateway.product(theirs, their_key, claimed=True)
    await gateway.dispute(product)
    await gateway.dispute(their_product)
    await gateway.data(RECALL, {"id": product["id"]}, key)
    await gateway.data(
        VERIFY, {"code": product["verificationCode"], "scan": {"deviceFingerprint": "alice"}}
    )
    sentinel = await gateway.product(mine, key)
    await gateway.data(RECALL, {"id": sentinel["id"]}, key)

    expected = {
        everything: [
            "OWNERSHIP_DISPUTE",
            "PRODUCT_RECALL",
            "RECALLED_PRODUCT_SCAN",
            "PRODUCT_RECALL",
        ],
        serious: ["OWNERSHIP_DISPUTE", "PRODUCT_RECALL", "PRODUCT_RECALL"],
        recalls: ["PRODUCT_RECALL", "PRODUCT_RECALL"],
    }
    for operation, types in expected.items():
        assert [(await inbox.alert(operation))["type"] for _ in types] == types
    closing = await gateway.closing_alert(mine, key)
    for operation in expected:
        await inbox.closes_with(operation, closing)
    assert (await other_inbox.alert(their_everything))["type"] == "OWNERSHIP_DISPUTE"
    await other_inbox.closes_with(their_everything, await gateway.closing_alert(theirs, their_key))
    await socket.close()
    await other.close()


async def test_replay_from_a_cursor_then_live_has_no_gap_and_no_duplicate(gateway: Gateway) -> None:
    brand, key = await gateway.brand()
    product = await gateway.product(brand, key, claimed=True)
    for _ in range(4):
        await gateway.dispute(product)
    backlog = await gateway.wait_for_alerts(brand, key, 4)
    cursor = backlog[1]["cursor"]

    async def produce() -> None:
        for _ in range(12):
            await gateway.dispute(product)

    producer = asyncio.create_task(produce())
    await asyncio.sleep(0.05)
    socket = await Socket.open(gateway, key)
    inbox = Inbox(socket)
    operation = await socket.subscribe(brand, after=cursor)
    await producer
    stored = await gateway.wait_for_alerts(brand, key, 16)
    expected = [alert["id"] for alert in stored[2:]]
    received = [(await inbox.alert(operation))["id"] for _ in expected]
    assert received == expected
    await inbox.closes_with(operation, await gateway.closing_alert(brand, key))
    await socket.close()


async def test_foreign_and_anonymous_subscriptions_fail_and_bad_keys_are_refused(
    gateway: Gateway,
) -> None:
    (mine, key), (theirs, _) = await gateway.brand(), await gateway.brand()
    socket = await Socket.open(gateway, key)
    inbox = Inbox(socket)
    foreign = await inbox.next(await socket.subscribe(theirs))
    assert foreign["type"] == "error"
    assert [error["extensions"]["code"] for error in foreign["payload"]] == ["NOT_FOUND"]
    assert theirs not in str(foreign)
    await socket.close()

    anonymous = await Socket.open(gateway, None)
    refused = await Inbox(anonymous).next(await anonymous.subscribe(mine))
    assert [error["extensions"]["code"] for error in refused["payload"]] == ["UNAUTHENTICATED"]
    await anonymous.close()

    with pytest.raises(Closed) as closed:
        await Socket.open(gateway, "pg_not-a-real-key")
    assert closed.value.code == 4403


async def test_legacy_graphql_ws_delivers_alerts_and_keeps_alive(gateway: Gateway) -> None:
    brand, key = await gateway.brand()
    socket = await Socket.open(gateway, key, protocol=LEGACY_WS)
    inbox = Inbox(socket)
    operation = await socket.subscribe(brand)
    await gateway.wait_for_subscriptions(1)
    await gateway.dispute(await gateway.product(brand, key, claimed=True))
    assert (await inbox.alert(operation))["type"] == "OWNERSHIP_DISPUTE"
    await socket.until_keepalives(1)
    assert socket.keepalives >= 1
    await inbox.closes_with(operation, await gateway.closing_alert(brand, key))
    await socket.close()


async def test_idle_connections_are_pinged(gateway: Gateway) -> None:
    brand, key = await gateway.brand()
    socket = await Socket.open(gateway, key)
    await socket.subscribe(brand)
    await socket.until_keepalives(2)
    assert socket.pings >= 2
    await socket.close()


async def test_a_revoked_keys_subscriptions_are_closed(gateway: Gateway) -> None:
    brand, key = await gateway.brand()
    created = await gateway.data(
        """mutation($b: ID!) {
            createApiKey(brandId: $b, name: "wall", role: PARTNER) { id apiKey }
        }""",
        {"b": brand},
        key,
    )
    partner = created["createApiKey"]
    socket = await Socket.open(gateway, partner["apiKey"])
    await socket.subscribe(brand)
    await gateway.wait_for_subscriptions(1)
    await gateway.data(
        """mutation($id: ID!) { revokeApiKey(id: $id) { id } }""", {"id": partner["id"]}, key
    )
    with pytest.raises(Closed) as closed:
        await socket.receive(timeout=3)
    assert (closed.value.code, closed.value.reason) == (4403, "API key revoked")


@pytest.mark.parametrize("protocol", [TRANSPORT_WS, LEGACY_WS])
async def test_row11_subscriptions_per_connection_are_capped_with_a_code(
    gateway: Gateway, protocol: str
) -> None:
    brand, key = await gateway.brand()
    socket = await Socket.open(gateway, key, protocol=protocol)
    inbox = Inbox(socket)
    for _ in range(10):
        await socket.subscribe(brand)
    refused = await inbox.next(await socket.subscribe(brand))
    assert refused["type"] == "error"
    errors = refused["payload"] if isinstance(refused["payload"], list) else [refused["payload"]]
    assert [error["extensions"]["code"] for error in errors] == ["RATE_LIMITED"]
    assert "limit" in str(refused["payload"]).lower()
    await socket.close()


async def test_row11_legacy_connection_error_has_a_code(gateway: Gateway) -> None:
    connection = await connect(gateway.ws_url, subprotocols=[LEGACY_WS])  # type: ignore[list-item]
    socket = Socket(connection, LEGACY_WS)
    await socket.send({"type": "connection_init", "payload": {"authorization": 42}})
    refused = await socket.receive()
    assert refused["type"] == "connection_error"
    assert refused["payload"]["extensions"]["code"] == "BAD_USER_INPUT"
    await socket.close()


def _shared_table(endpoint: str, table: str) -> dict[str, str]:
    """What two processes of one DynamoDB deployment have in common: the table
    and every secret. Their data directories differ, so nothing is shared
    through key files."""
    return {
        "PROOFGATE_BACKEND": "dynamodb",
        "PROOFGATE_DYNAMODB_ENDPOINT": endpoint,
        "PROOFGATE_TABLE": table,
        "PROOFGATE_AWS_REGION": REGION,
        "PROOFGATE_CURSOR_KEY": base64.urlsafe_b64encode(os.urandom(32)).decode(),
        "PROOFGATE_HASH_SALT": base64.urlsafe_b64encode(os.urandom(32)).decode(),
        "PROOFGATE_SIGNING_KEY": SigningKey.generate().private_key_pem().decode(),
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
    }


@pytest.fixture(params=["sqlite", "dynamodb"])
async def two_gateways(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[Gateway, Gateway]]:
    """Two processes on one SQLite file, or on one table of the moto server.
    B's relay effectively never polls, so what B's subscribers receive was
    written by A and found by B's tailer."""
    directories = (tmp_path, tmp_path)
    env: dict[str, str] = {}
    if request.param == "dynamodb":
        endpoint: str = request.getfixturevalue("moto_endpoint")
        table = f"two-{uuid.uuid4().hex[:8]}"
        await create_table(table_name=table, region=REGION, endpoint_url=endpoint)
        directories = (tmp_path / "a", tmp_path / "b")
        env = _shared_table(endpoint, table)
    a = await Gateway(directories[0], **env).start()
    b = await Gateway(directories[1], PROOFGATE_RELAY_POLL_MS="600000", **env).start()
    try:
        yield a, b
    finally:
        await a.stop()
        await b.stop()


async def test_an_alert_caused_on_one_process_reaches_a_subscriber_on_another(
    two_gateways: tuple[Gateway, Gateway],
) -> None:
    """Each alert arrives, and exactly once: B's tailer re-reads the last
    ``tail_overlap`` of alerts on every poll. How soon is a speed, measured
    by ``bench/alerts.py`` (scan to subscriber, two processes), not asserted
    here: a bound on wall time failed under a loaded test run."""
    a, b = two_gateways
    brand, key = await a.brand()
    socket = await Socket.open(b, key)
    inbox = Inbox(socket)
    operation = await socket.subscribe(brand)
    await b.wait_for_subscriptions(1)
    product = await a.product(brand, key, claimed=True)
    received: list[dict[str, Any]] = []
    for _ in range(3):
        await a.dispute(product)
        received.append(await inbox.alert(operation))
    stored = await a.alerts(brand, key)
    await inbox.closes_with(operation, await a.closing_alert(brand, key))
    assert [alert["id"] for alert in received] == [alert["id"] for alert in stored]
    assert {alert["type"] for alert in received} == {"OWNERSHIP_DISPUTE"}
    await socket.close()


async def test_a_slow_consumer_is_disconnected_with_a_clear_reason(tmp_path: Path) -> None:
    """In-process uvicorn (a real server and socket) so the test can flood the
    broker faster than any connection drains: the subscription's queue holds
    four alerts, the fifth closes the connection rather than pile up or be dropped."""
    settings = Settings(
        cursor_key=bytes(range(32)),
        admin_key=ADMIN_KEY,
        sqlite_path=str(tmp_path / "slow.db"),
        port=free_port(),
        pipeline=PipelineSettings(queue_max=4),
        limits=Limits(rate_limit=None, key_rate_limit=None),
    )
    app = create_app(settings)
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=settings.port, log_level="warning")
    )
    serving = asyncio.create_task(server.serve())
    gateway = Gateway(tmp_path, port=settings.port)
    try:
        while not server.started:
            await asyncio.sleep(0.01)
        brand, key = await gateway.brand()
        socket = await Socket.open(gateway, key)
        await socket.subscribe(brand)
        broker = app.state.pipeline.broker
        while broker.subscription_count == 0:
            await asyncio.sleep(0.01)
        now = datetime.now(UTC)
        for index in range(50):
            draft = product_recall(
                brand_id=brand, product_id=f"P{index}", recalled_at=now, reason=None
            )
            broker.publish(alert_item(draft, now + timedelta(microseconds=index)))
        received = 0
        with pytest.raises(Closed) as closed:
            while True:
                await socket.receive(timeout=3)
                received += 1
        assert closed.value.code == 4008
        assert closed.value.reason.startswith("Slow consumer")
        assert received <= 4
        while broker.subscription_count:
            await asyncio.sleep(0.01)
    finally:
        await gateway.stop()
        server.should_exit = True
        await serving
