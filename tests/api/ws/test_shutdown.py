"""SIGTERM on a real ``proofgate serve`` while 50 requests are in flight and
20 subscriptions are open: every request is answered, every WebSocket closes
with 1001, no outbox lease is left held, and the process exits.

The requests are kept in flight by holding SQLite's write lock from the test,
so each verification waits inside the gateway when the signal arrives; the
lock is let go only once the gateway has stopped accepting connections.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from _live import VERIFY, Gateway, Inbox, Socket

from services.pipeline import PipelineSettings
from storage.access_patterns import OUTBOX_DUE
from storage.sqlite import open_sqlite

pytestmark = pytest.mark.slow

IN_FLIGHT = 50
SUBSCRIPTIONS = 20
FAR_FUTURE = datetime(9999, 1, 1, tzinfo=UTC)


async def post_verify(port: int, code: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """The request written and flushed; its answer is read later."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    body = json.dumps({"query": VERIFY, "variables": {"code": code}}).encode()
    head = (
        "POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    writer.write(head.encode() + body)
    await writer.drain()
    return reader, writer


async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> tuple[int, bytes]:
    raw = await asyncio.wait_for(reader.read(), 20)
    writer.close()
    status_line, _, rest = raw.partition(b"\r\n")
    _, _, body = rest.partition(b"\r\n\r\n")
    return int(status_line.split()[1]), body


async def fresh_health(port: int) -> int:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    await writer.drain()
    status, _ = await answer(reader, writer)
    return status


async def refuses_connections(port: int, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            return True
        writer.close()
        await asyncio.sleep(0.02)
    return False


async def held_leases(database: Path) -> list[str]:
    store = await open_sqlite(str(database), cursor_key=b"k" * 32)
    try:
        held: list[str] = []
        for shard in PipelineSettings().shards:
            page = await store.query(
                OUTBOX_DUE, {"shard": shard, "before": FAR_FUTURE}, tenant="test", first=100
            )
            held += [item["id"] for item in page.items if "leaseOwner" in item]
        return held
    finally:
        await store.close()


async def test_sigterm_answers_in_flight_requests_and_closes_sockets_going_away(
    tmp_path: Path,
) -> None:
    gateway = await Gateway(tmp_path, PROOFGATE_SHUTDOWN_SECONDS="20").start()
    assert gateway.process is not None
    try:
        brand_id, key = await gateway.brand()
        product = await gateway.product(brand_id, key, claimed=True)
        sockets = [await Socket.open(gateway, key) for _ in range(SUBSCRIPTIONS)]
        inboxes = [Inbox(socket_) for socket_ in sockets]
        operations = [await socket_.subscribe(brand_id) for socket_ in sockets]
        await gateway.dispute(product)
        for inbox, operation in zip(inboxes, operations, strict=True):
            assert (await inbox.alert(operation))["type"] == "OWNERSHIP_DISPUTE"

        lock = sqlite3.connect(tmp_path / "proofgate.db", isolation_level=None)
        lock.execute("BEGIN IMMEDIATE")
        try:
            pending = [
                await post_verify(gateway.port, product["verificationCode"])
                for _ in range(IN_FLIGHT)
            ]
            # Connections are accepted in order: a new one answered means the
            # gateway has accepted every request above and is reading them.
            assert await fresh_health(gateway.port) == 200
            gateway.process.send_signal(signal.SIGTERM)
            assert await refuses_connections(gateway.port), "still accepting after SIGTERM"
        finally:
            lock.execute("ROLLBACK")
            lock.close()
        answers = await asyncio.gather(*(answer(*request) for request in pending))
        for socket_ in sockets:
            await asyncio.wait_for(socket_.connection.wait_closed(), 10)
        exit_code = await asyncio.to_thread(gateway.process.wait, 30)
    finally:
        await gateway.stop()
    assert [status for status, _ in answers] == [200] * IN_FLIGHT
    results = [json.loads(body)["data"]["verifyProduct"]["result"] for _, body in answers]
    assert set(results) <= {"AUTHENTIC", "SUSPICIOUS"} and len(results) == IN_FLIGHT
    assert [s.connection.close_code for s in sockets] == [1001] * SUBSCRIPTIONS
    assert exit_code in (0, -signal.SIGTERM)
    assert await held_leases(tmp_path / "proofgate.db") == []
