"""Alert latency and fan-out, against real gateway processes over WebSockets.

- scan to subscriber, one process: a subscriber on gateway A, a scan sent to A
  that raises CLAIMED_PRODUCT_SCAN (a fresh claimed product per sample, so
  no alert is deduplicated); from sending the scan to the alert arriving.
- scan to subscriber, two processes: the same scan sent to A, the subscriber
  on gateway B (same SQLite file), which learns of it by tailing AP12. B's
  relay is told never to poll, so every alert it delivers came from A.
- the same through Redis: a second pair of gateways with ``PROOFGATE_REDIS_URL``
  on a redis-server started for the run (skipped without the binary).
- fan-out: 1,000 WebSocket connections with one subscription each on A, one
  alert, the time until each of them has it; and A's resident memory per idle
  subscription, from its RSS before and after they connected.
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect

from ._harness import print_table
from ._server import Server, free_port, redis_serving, serving

LOCAL_SAMPLES = 200
REMOTE_SAMPLES = 40
REDIS_SAMPLES = 200
SUBSCRIBERS = 1000
FANOUT_ALERTS = 5
TAIL_INTERVAL_MS = 500
ADMIN_KEY = "bench-admin-" + uuid.uuid4().hex
ENV = {
    "PROOFGATE_ADMIN_KEY": ADMIN_KEY,
    "PROOFGATE_RATE_LIMIT": "off",
    "PROOFGATE_KEY_RATE_LIMIT": "off",
    "PROOFGATE_TAIL_INTERVAL_MS": str(TAIL_INTERVAL_MS),
    # The fan-out holds 1,000 subscriptions of one key to one brand, past the
    # per-key and per-brand quotas a production gateway keeps.
    "PROOFGATE_SUBSCRIPTIONS_PER_KEY": str(2 * SUBSCRIBERS),
    "PROOFGATE_SUBSCRIPTIONS_PER_BRAND": str(2 * SUBSCRIBERS),
    "PROOFGATE_ALERT_COST_PER_BRAND": str(100 * SUBSCRIBERS),
}
SUBSCRIBE = "subscription($b: ID!) { threatAlerts(brandId: $b) { id type } }"
REGISTER_BRAND = """mutation($d: String!) {
    registerBrand(input: {name: "Bench", domain: $d, plan: PRO}) { apiKey brand { id } }
}"""
GRANT = """mutation($b: ID!, $k: String!) {
    grantCredits(brandId: $b, amount: "100000", idempotencyKey: $k) { id }
}"""
REGISTER_PRODUCT = """mutation($b: ID!, $n: String!) {
    registerProduct(input: {brandId: $b, name: $n}) { verificationCode }
}"""
CLAIM = (
    """mutation($c: String!) { claimProduct(code: $c, deviceFingerprint: "alice") { claimedAt } }"""
)
VERIFY = """mutation($c: String!) {
    verifyProduct(code: $c, scan: {deviceFingerprint: "mallory"}) { result }
}"""


async def _graphql(
    client: httpx.AsyncClient, query: str, variables: dict[str, Any], key: str | None = None
) -> Any:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    response = await client.post(
        "/graphql", json={"query": query, "variables": variables}, headers=headers
    )
    body = response.json()
    if body.get("errors"):
        raise RuntimeError(body["errors"])
    return body["data"]


async def _seed(
    client: httpx.AsyncClient, products: int, claimed: bool = True
) -> tuple[str, str, list[str]]:
    """A brand, its key, and the codes of ``products`` products, claimed
    unless ``claimed`` is False."""
    domain = f"{uuid.uuid4().hex[:10]}.example.com"
    data = await _graphql(client, REGISTER_BRAND, {"d": domain}, ADMIN_KEY)
    brand, key = data["registerBrand"]["brand"]["id"], data["registerBrand"]["apiKey"]
    await _graphql(client, GRANT, {"b": brand, "k": uuid.uuid4().hex}, ADMIN_KEY)
    codes = []
    for _ in range(products):
        product = await _graphql(client, REGISTER_PRODUCT, {"b": brand, "n": uuid.uuid4().hex}, key)
        code = product["registerProduct"]["verificationCode"]
        if claimed:
            await _graphql(client, CLAIM, {"c": code})
        codes.append(code)
    return brand, key, codes


async def _subscribe(server: Server, key: str, brand: str) -> ClientConnection:
    socket = await connect(
        f"ws://127.0.0.1:{server.port}/graphql", subprotocols=["graphql-transport-ws"]
    )  # type: ignore[list-item]
    await socket.send(
        json.dumps({"type": "connection_init", "payload": {"authorization": f"Bearer {key}"}})
    )
    assert json.loads(await socket.recv())["type"] == "connection_ack"
    await socket.send(
        json.dumps(
            {
                "id": "1",
                "type": "subscribe",
                "payload": {"query": SUBSCRIBE, "variables": {"b": brand}},
            }
        )
    )
    return socket


async def _alert(socket: ClientConnection) -> float:
    """When the next alert arrived (answering pings meanwhile)."""
    while True:
        message = json.loads(await socket.recv())
        if message["type"] == "ping":
            await socket.send(json.dumps({"type": "pong"}))
            continue
        if message["type"] != "next":
            raise RuntimeError(message)
        return time.perf_counter()


async def _latencies(
    client: httpx.AsyncClient, socket: ClientConnection, codes: list[str], *, jitter: float = 0.0
) -> list[float]:
    """``jitter``: a random pause before each scan, so scans do not fall in
    step with the tailer's polls (which would measure the interval, not the lag)."""
    samples = []
    for code in codes:
        await asyncio.sleep(random.uniform(0, jitter))
        arrival = asyncio.create_task(_alert(socket))
        started = time.perf_counter()
        await _graphql(client, VERIFY, {"c": code})
        samples.append(await asyncio.wait_for(arrival, 10) - started)
    return samples


def _rss_kb(server: Server) -> int:
    for line in Path(f"/proc/{server.process.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


async def _fanout(
    client: httpx.AsyncClient, server: Server, key: str, brand: str, codes: list[str]
) -> tuple[list[float], float]:
    before = _rss_kb(server)
    sockets = []
    for start in range(0, SUBSCRIBERS, 100):
        sockets += await asyncio.gather(
            *(_subscribe(server, key, brand) for _ in range(start, min(SUBSCRIBERS, start + 100)))
        )
    await asyncio.sleep(1.0)
    per_subscription = (_rss_kb(server) - before) / SUBSCRIBERS
    samples: list[float] = []
    try:
        for code in codes:
            arrivals = [asyncio.create_task(_alert(socket)) for socket in sockets]
            started = time.perf_counter()
            await _graphql(client, VERIFY, {"c": code})
            samples += [
                arrival - started
                for arrival in await asyncio.wait_for(asyncio.gather(*arrivals), 30)
            ]
    finally:
        await asyncio.gather(*(socket.close() for socket in sockets), return_exceptions=True)
    return samples, per_subscription


def _row(name: str, samples: list[float], target: str) -> tuple[str, ...]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return (
        name,
        str(len(samples)),
        f"{statistics.median(ordered) * 1000:.1f}",
        f"{p99 * 1000:.1f}",
        target,
    )


@contextmanager
def _two_gateways(root: Path, name: str, env: dict[str, str]) -> Iterator[tuple[Server, Server]]:
    """A and B on one SQLite file; B's relay never polls, so every alert B
    delivers came from A."""
    data_dir = str(root / "data")
    ports = free_port(), free_port()
    commands = [
        [sys.executable, "-m", "api.cli", "serve", "--port", str(port), "--data-dir", data_dir]
        for port in ports
    ]
    remote_env = {**env, "PROOFGATE_RELAY_POLL_MS": "600000"}
    with (
        serving(
            f"{name}-a", commands[0], port=ports[0], probe="/health", log_dir=root, env=env
        ) as a,
        serving(
            f"{name}-b", commands[1], port=ports[1], probe="/health", log_dir=root, env=remote_env
        ) as b,
    ):
        yield a, b


async def _remote(a: Server, b: Server, samples: int, jitter: float) -> list[float]:
    async with httpx.AsyncClient(base_url=a.url, timeout=30) as client:
        brand, key, codes = await _seed(client, samples)
        socket = await _subscribe(b, key, brand)
        await asyncio.sleep(0.5)
        try:
            return await _latencies(client, socket, codes, jitter=jitter)
        finally:
            await socket.close()


async def run() -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        with _two_gateways(root, "alerts", ENV) as (a, b):
            async with httpx.AsyncClient(base_url=a.url, timeout=30) as client:
                brand, key, codes = await _seed(client, LOCAL_SAMPLES + FANOUT_ALERTS)
                local_socket = await _subscribe(a, key, brand)
                local = await _latencies(client, local_socket, codes[:LOCAL_SAMPLES])
                await local_socket.close()
                fanout, memory = await _fanout(client, a, key, brand, codes[-FANOUT_ALERTS:])
            remote = await _remote(a, b, REMOTE_SAMPLES, TAIL_INTERVAL_MS / 1000)
        with redis_serving(root) as redis_url:
            through_redis: list[float] = []
            if redis_url is not None:
                env = {**ENV, "PROOFGATE_REDIS_URL": redis_url}
                with _two_gateways(root, "alerts-redis", env) as (a, b):
                    through_redis = await _remote(a, b, REDIS_SAMPLES, 0.02)
    rows = [
        _row("one process", local, "p99 < 50"),
        _row("two processes (tail)", remote, f"p99 < {TAIL_INTERVAL_MS + 100}"),
    ]
    if through_redis:
        rows.append(_row("two processes (redis)", through_redis, "p99 < 50"))
    else:
        rows.append(("two processes (redis)", "0", "-", "-", "redis-server not installed"))
    rows.append(_row(f"fan-out to {SUBSCRIBERS} sockets", fanout, "p99 < 100"))
    print_table(
        "Threat alerts: scan to subscriber (ms)", rows, ("path", "samples", "p50", "p99", "target")
    )
    print_table(
        "Threat alerts: memory",
        [("idle subscription (KB)", f"{memory:.1f}", "< 50")],
        ("measure", "value", "target"),
    )
