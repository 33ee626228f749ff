"""Real gateway processes and real WebSocket clients, for the live-alert tests.

``Gateway`` runs ``proofgate serve`` in a subprocess on a free loopback port;
``Socket`` speaks graphql-transport-ws (or legacy graphql-ws) to it with the
``websockets`` client, answering the server's pings as a real client does.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect

from tests._support.ports import free_port

ADMIN_KEY = "live-test-admin-key-0123456789"
TRANSPORT_WS = "graphql-transport-ws"
LEGACY_WS = "graphql-ws"

REGISTER_BRAND = """mutation($input: RegisterBrandInput!) {
    registerBrand(input: $input) { apiKey brand { id } }
}"""
REGISTER_PRODUCT = """mutation($input: RegisterProductInput!) {
    registerProduct(input: $input) { id verificationCode }
}"""
CLAIM = """mutation($code: String!) {
    claimProduct(code: $code, deviceFingerprint: "alice") { claimedAt }
}"""
DISPUTE = """mutation($code: String!) {
    disputeClaim(code: $code, deviceFingerprint: "bob", reason: "Mine") { claimedAt }
}"""
RECALL = """mutation($id: ID!) { recallProduct(productId: $id, reason: "Recalled") { status } }"""
VERIFY = """mutation($code: String!, $scan: ScanInput) {
    verifyProduct(code: $code, scan: $scan) { result }
}"""
THREATS = """query($id: ID!, $after: String) {
    brand(id: $id) {
        stats { threatCount }
        threats(first: 100, after: $after) {
            edges { node { id cursor type severity } }
            pageInfo { hasNextPage endCursor }
        }
    }
}"""
RECALLS = """query($id: ID!) {
    brand(id: $id) { threats(first: 20) { edges { node { id type product { id } } } } }
}"""
SUBSCRIBE = """subscription($brand: ID!, $min: Severity, $types: [ThreatType!], $after: String) {
    threatAlerts(brandId: $brand, minSeverity: $min, types: $types, after: $after) {
        id type severity cursor
    }
}"""


class Gateway:
    """One ``proofgate serve`` process."""

    def __init__(self, data_dir: Path, port: int | None = None, **env: str) -> None:
        """``port``: talk to a gateway already listening there instead of starting one."""
        self.data_dir = data_dir
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.ws_url = f"ws://127.0.0.1:{self.port}/graphql"
        self.env = {
            **os.environ,
            "PROOFGATE_DATA_DIR": str(data_dir),
            "PROOFGATE_ADMIN_KEY": ADMIN_KEY,
            "PROOFGATE_PORT": str(self.port),
            "PROOFGATE_TAIL_INTERVAL_MS": "100",
            "PROOFGATE_KEY_CHECK_MS": "200",
            "PROOFGATE_WS_KEEPALIVE_MS": "300",
            "PROOFGATE_WEBHOOK_ALLOW_PRIVATE": "1",
            "PROOFGATE_WEBHOOK_RETRY_BASE_MS": "50",
            # Many anonymous verifications from one address; test_limits_rate covers the limits.
            "PROOFGATE_RATE_LIMIT": "off",
            "PROOFGATE_KEY_RATE_LIMIT": "off",
            **env,
        }
        self.process: subprocess.Popen[bytes] | None = None
        self.client = httpx.AsyncClient(base_url=self.url, timeout=10)

    async def start(self) -> Gateway:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "api.cli.main", "serve"],
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"gateway exited with {self.process.returncode}")
            try:
                # /ready, not /health: a DynamoDB gateway whose first check of
                # the store ran out of time (a loaded run) answers /health while
                # it checks again (docs/design.md, Degraded start).
                if (await self.client.get("/ready")).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.05)
        raise AssertionError("gateway did not start")

    def kill(self) -> None:
        """SIGKILL: no shutdown, no lease released, nothing flushed but what committed."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    async def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        await self.client.aclose()

    async def execute(
        self, query: str, variables: Mapping[str, Any] | None = None, key: str | None = None
    ) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        response = await self.client.post(
            "/graphql", json={"query": query, "variables": dict(variables or {})}, headers=headers
        )
        body: dict[str, Any] = response.json()
        return body

    async def data(
        self, query: str, variables: Mapping[str, Any] | None = None, key: str | None = None
    ) -> dict[str, Any]:
        body = await self.execute(query, variables, key)
        assert "errors" not in body, body["errors"]
        data: dict[str, Any] = body["data"]
        return data

    async def brand(self) -> tuple[str, str]:
        """A new brand's id and key."""
        data = await self.data(
            REGISTER_BRAND,
            {"input": {"name": "Live", "domain": f"{uuid.uuid4().hex[:8]}.example.com"}},
            ADMIN_KEY,
        )
        return data["registerBrand"]["brand"]["id"], data["registerBrand"]["apiKey"]

    async def product(self, brand_id: str, key: str, *, claimed: bool = False) -> dict[str, str]:
        data = await self.data(
            REGISTER_PRODUCT, {"input": {"brandId": brand_id, "name": uuid.uuid4().hex}}, key
        )
        product: dict[str, str] = data["registerProduct"]
        if claimed:
            await self.data(CLAIM, {"code": product["verificationCode"]})
        return product

    async def dispute(self, product: Mapping[str, str]) -> None:
        """One OWNERSHIP_DISPUTE alert (CRITICAL); every dispute raises its own."""
        await self.data(DISPUTE, {"code": product["verificationCode"]})

    async def brand_with_an_alert(self) -> tuple[str, str, dict[str, str], str]:
        """A brand, its key, a claimed product, and the cursor of the brand's
        one alert: a client subscribing after it misses no alert raised once
        it starts, however long it takes to subscribe."""
        brand, key = await self.brand()
        product = await self.product(brand, key, claimed=True)
        await self.dispute(product)
        (alert,) = await self.wait_for_alerts(brand, key, 1)
        return brand, key, product, alert["cursor"]

    async def alerts(self, brand_id: str, key: str) -> list[dict[str, Any]]:
        """The brand's alerts, oldest first."""
        data = await self.data(THREATS, {"id": brand_id}, key)
        return [edge["node"] for edge in reversed(data["brand"]["threats"]["edges"])]

    async def wait_for_alerts(
        self, brand_id: str, key: str, count: int, timeout: float = 10
    ) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while True:
            found = await self.alerts(brand_id, key)
            if len(found) >= count:
                return found
            if time.monotonic() > deadline:
                raise AssertionError(f"{len(found)} of {count} alerts after {timeout} s")
            await asyncio.sleep(0.05)

    async def subscription_count(self) -> int:
        """Live ``threatAlerts`` subscriptions, as the process's broker counts them."""
        response = await self.client.get(
            "/metrics", headers={"Authorization": f"Bearer {ADMIN_KEY}"}
        )
        assert response.status_code == 200, response.text
        found = re.search(r"^proofgate_subscriptions (\S+)$", response.text, re.MULTILINE)
        assert found, "no proofgate_subscriptions gauge in /metrics"
        return int(float(found.group(1)))

    async def wait_for_subscriptions(self, count: int, timeout: float = 10) -> None:
        """Until the broker holds exactly ``count`` subscriptions. A subscription
        is registered when the server counts it: alerts raised from then on
        reach it. Exactly, so a test's own subscriptions are not mistaken for
        an earlier test's, which close as that test ends."""
        deadline = time.monotonic() + timeout
        while (found := await self.subscription_count()) != count:
            if time.monotonic() > deadline:
                raise AssertionError(f"{found} subscriptions, not {count}, after {timeout} s")
            await asyncio.sleep(0.02)

    async def closing_alert(self, brand_id: str, key: str, timeout: float = 10) -> str:
        """The id of a fresh PRODUCT_RECALL (CRITICAL) alert of the brand, once
        stored. Alerts reach a subscriber in the order they were raised, so a
        subscription that matches it and receives it next has received nothing
        else in between: the positive control of every "nothing more" check."""
        product = await self.product(brand_id, key)
        await self.data(RECALL, {"id": product["id"]}, key)
        deadline = time.monotonic() + timeout
        while True:
            data = await self.data(RECALLS, {"id": brand_id}, key)
            for edge in data["brand"]["threats"]["edges"]:
                node = edge["node"]
                if node["type"] == "PRODUCT_RECALL" and node["product"]["id"] == product["id"]:
                    return str(node["id"])
            if time.monotonic() > deadline:
                raise AssertionError(f"no recall alert after {timeout} s")
            await asyncio.sleep(0.05)


class Closed(Exception):
    def __init__(self, code: int | None, reason: str) -> None:
        super().__init__(f"closed {code} {reason}")
        self.code = code
        self.reason = reason


class Socket:
    """A GraphQL WebSocket client connection."""

    def __init__(self, connection: ClientConnection, protocol: str) -> None:
        self.connection = connection
        self.protocol = protocol
        self.pings = 0
        self.keepalives = 0
        self._ids = 0

    @classmethod
    async def open(cls, gateway: Gateway, key: str | None, protocol: str = TRANSPORT_WS) -> Socket:
        connection = await connect(gateway.ws_url, subprotocols=[protocol])  # type: ignore[list-item]
        socket_ = cls(connection, protocol)
        payload = {"authorization": f"Bearer {key}"} if key else {}
        await socket_.send({"type": "connection_init", "payload": payload})
        ack = await socket_.receive()
        assert ack["type"] == "connection_ack", ack
        return socket_

    async def send(self, message: Mapping[str, Any]) -> None:
        await self.connection.send(json.dumps(message))

    async def receive(self, timeout: float = 5) -> dict[str, Any]:
        """The next protocol message, answering pings and counting keep-alives."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                raw = await asyncio.wait_for(
                    self.connection.recv(), max(0.0, deadline - time.monotonic())
                )
            except Exception as error:
                close = self.connection.close_code, self.connection.close_reason or ""
                if close[0] is not None:
                    raise Closed(*close) from error
                raise
            message: dict[str, Any] = json.loads(raw)
            if message["type"] == "ping":
                self.pings += 1
                await self.send({"type": "pong"})
                continue
            if message["type"] == "ka":
                self.keepalives += 1
                continue
            return message

    async def until_keepalives(self, count: int, timeout: float = 10) -> None:
        """Until the server has sent ``count`` pings or ``ka`` messages, failing
        on any other message first: an idle connection is kept alive and sent
        nothing else."""
        async with asyncio.timeout(timeout):
            while self.pings + self.keepalives < count:
                message: dict[str, Any] = json.loads(await self.connection.recv())
                if message["type"] == "ping":
                    self.pings += 1
                    await self.send({"type": "pong"})
                elif message["type"] == "ka":
                    self.keepalives += 1
                else:
                    raise AssertionError(f"an idle connection received {message}")

    async def subscribe(self, brand_id: str, **variables: Any) -> str:
        self._ids += 1
        operation = str(self._ids)
        payload = {"query": SUBSCRIBE, "variables": {"brand": brand_id, **variables}}
        kind = "subscribe" if self.protocol == TRANSPORT_WS else "start"
        await self.send({"id": operation, "type": kind, "payload": payload})
        return operation

    async def close(self) -> None:
        await self.connection.close()


class Inbox:
    """Sorts a socket's messages by operation, so one connection can carry several subscriptions."""

    def __init__(self, socket_: Socket) -> None:
        self.socket = socket_
        self.messages: dict[str, list[dict[str, Any]]] = {}

    async def next(self, operation: str, timeout: float = 5) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while not self.messages.get(operation):
            message = await self.socket.receive(max(0.01, deadline - time.monotonic()))
            self.messages.setdefault(message.get("id", ""), []).append(message)
        return self.messages[operation].pop(0)

    async def alert(self, operation: str, timeout: float = 5) -> dict[str, Any]:
        message = await self.next(operation, timeout)
        assert message["type"] in ("next", "data"), message
        alert: dict[str, Any] = message["payload"]["data"]["threatAlerts"]
        return alert

    async def closes_with(self, operation: str, alert_id: str) -> None:
        """The operation's next alert is ``alert_id`` (see ``Gateway.closing_alert``)."""
        alert = await self.alert(operation)
        assert alert["id"] == alert_id, f"received {alert} before the closing alert"
