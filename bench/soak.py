"""The soak (issue 10): ten minutes of mixed load on one gateway with the
embedded store, against 127.0.0.1 only.

- wrk sends queries and scans (``productByCode`` and ``verifyProduct`` on a
  load brand's unclaimed products) for the whole run;
- ``SUBSCRIBERS`` WebSocket subscriptions spread over ``BRANDS`` brands, one
  of them closed and resumed with ``after:`` (its last alert's cursor) every
  ``RECONNECT_SECONDS``;
- a driver scans a fresh claimed product of a subscribed brand every
  ``ALERT_SECONDS``, each raising one CLAIMED_PRODUCT_SCAN alert.

Resident memory is sampled every ``SAMPLE_SECONDS``; the bars: RSS grows
by at most 1% from half-time to the end of the run (2% over an hour or more:
``bench/_soak_memory.py``), no lease lapsed while its item was queued
(``proofgate_relay_items{event="lapsed"}``), and every subscriber has every
alert of its brand exactly once. ``BENCH_SOAK_SECONDS`` sets the length
(e.g. 60 to check that it works, 3600 for the hour);
``BENCH_SOAK_TRACEMALLOC=N`` prints the allocation sites that grew.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx
from websockets.asyncio.client import ClientConnection, connect

from ._harness import print_table
from ._server import Server, free_port, serving
from ._soak_memory import TRACEMALLOC_FRAMES, MemoryCurve, memory_report, native_memory
from ._wrk import WRK, Request, run_wrk
from .alerts import ADMIN_KEY, VERIFY, _graphql, _seed

SECONDS = int(os.environ.get("BENCH_SOAK_SECONDS", "600"))
SUBSCRIBERS = 500
BRANDS = 5
ALERT_SECONDS = 1.0
RECONNECT_SECONDS = 2.0
SAMPLE_SECONDS = 10.0
LOAD_PRODUCTS = 50
WRK_CONNECTIONS = 8
SCANS_PER_QUERIES = 25
"""One wrk request in this many is a scan (a write and an outbox item)."""
SETTLE_SECONDS = 120.0
ENV = {
    "PROOFGATE_ADMIN_KEY": ADMIN_KEY,
    "PROOFGATE_RATE_LIMIT": "off",
    "PROOFGATE_KEY_RATE_LIMIT": "off",
    # 100 subscribers per brand, reconnecting: room above the per-key and
    # per-brand quotas for a socket that has not yet let go of its old one.
    "PROOFGATE_SUBSCRIPTIONS_PER_KEY": "1000",
    "PROOFGATE_SUBSCRIPTIONS_PER_BRAND": "1000",
}
SUBSCRIBE = """subscription($b: ID!, $after: String) {
    threatAlerts(brandId: $b, after: $after) { id cursor }
}"""
PRODUCT = "query($c: String!) { productByCode(code: $c) { id name status } }"
SCAN = """mutation($c: String!) {
    verifyProduct(code: $c, scan: {deviceFingerprint: "soak"}) { result }
}"""


class Subscriber:
    """One subscription that survives reconnects: what it received, in order."""

    def __init__(self, server: Server, key: str, brand: str) -> None:
        self.server, self.key, self.brand = server, key, brand
        self.received: list[str] = []
        self.cursor: str | None = None
        self.socket: ClientConnection | None = None
        self.reader: asyncio.Task[None] | None = None

    async def open(self) -> None:
        socket = await connect(
            f"ws://127.0.0.1:{self.server.port}/graphql",
            subprotocols=["graphql-transport-ws"],  # type: ignore[list-item]
            max_size=2**20,
        )
        await socket.send(
            json.dumps(
                {"type": "connection_init", "payload": {"authorization": f"Bearer {self.key}"}}
            )
        )
        if json.loads(await socket.recv())["type"] != "connection_ack":
            raise RuntimeError("no connection_ack")
        variables = {"b": self.brand, "after": self.cursor}
        payload = {"query": SUBSCRIBE, "variables": variables}
        await socket.send(json.dumps({"id": "1", "type": "subscribe", "payload": payload}))
        self.socket = socket
        self.reader = asyncio.create_task(self._read(socket))

    async def _read(self, socket: ClientConnection) -> None:
        with contextlib.suppress(Exception):
            async for raw in socket:
                message = json.loads(raw)
                if message["type"] == "ping":
                    await socket.send(json.dumps({"type": "pong"}))
                elif message["type"] == "next":
                    alert = message["payload"]["data"]["threatAlerts"]
                    self.received.append(alert["id"])
                    self.cursor = alert["cursor"]
                elif message["type"] in ("error", "complete"):
                    raise RuntimeError(message)

    async def close(self) -> None:
        if self.socket is not None:
            await self.socket.close()
        if self.reader is not None:
            await self.reader


async def _reconnects(subscribers: list[Subscriber], stop: asyncio.Event) -> int:
    count = 0
    while not stop.is_set():
        await asyncio.sleep(RECONNECT_SECONDS)
        # Only one that has a cursor to resume from: the others have nothing
        # to resume, and would miss what is raised while they reconnect.
        resumable = [s for s in subscribers if s.cursor is not None]
        if not resumable:
            continue
        chosen = random.choice(resumable)
        await chosen.close()
        await chosen.open()
        count += 1
    return count


async def _alerts(
    client: httpx.AsyncClient, codes: list[tuple[str, str]], stop: asyncio.Event
) -> Counter[str]:
    """Scans one fresh claimed product a tick; how many alerts each brand should get."""
    expected: Counter[str] = Counter()
    for brand, code in codes:
        if stop.is_set():
            break
        await _graphql(client, VERIFY, {"c": code})
        expected[brand] += 1
        await asyncio.sleep(ALERT_SECONDS)
    return expected


async def _memory(client: httpx.AsyncClient) -> str:
    """The gateway's memory report at half-time and at the end: what SQLite,
    malloc and the collector held, and the sites that grew while traced."""
    await asyncio.sleep(SECONDS / 2)
    half = await memory_report(client, ADMIN_KEY)
    await asyncio.sleep(SECONDS / 2)
    end = await memory_report(
        client, ADMIN_KEY, by="traceback" if TRACEMALLOC_FRAMES > 1 else "lineno"
    )
    totals = [line for line in half.splitlines() if line.startswith("# ") and "sites" not in line]
    return "\n".join(["# at half-time:", *totals, "# at the end:", end])


async def _metric(client: httpx.AsyncClient, prefix: str) -> float:
    response = await client.get("/metrics", headers={"Authorization": f"Bearer {ADMIN_KEY}"})
    for line in response.text.splitlines():
        if line.startswith(prefix):
            return float(line.split()[-1])
    raise RuntimeError(f"{prefix} is not exported")


async def _settled(
    client: httpx.AsyncClient, subscribers: list[Subscriber], expected: Counter[str]
) -> float:
    """Waits until the outbox is empty and every subscriber has its alerts
    (or ``SETTLE_SECONDS`` passed); how long that took."""
    started = time.monotonic()
    while time.monotonic() - started < SETTLE_SECONDS:
        queued = await _metric(client, "proofgate_outbox_queued ")
        short = any(len(set(s.received)) < expected[s.brand] for s in subscribers)
        if queued == 0 and not short:
            break
        await asyncio.sleep(1.0)
    return time.monotonic() - started


async def _soak(server: Server) -> None:
    alerts_max = int(SECONDS / ALERT_SECONDS) + 1
    async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:
        brands = [await _seed(client, alerts_max // BRANDS + 1) for _ in range(BRANDS)]
        _, _, load_codes = await _seed(client, LOAD_PRODUCTS, claimed=False)
        subscribers = [
            Subscriber(server, key, brand)
            for index in range(SUBSCRIBERS)
            for brand, key, _ in [brands[index % BRANDS]]
        ]
        for start in range(0, SUBSCRIBERS, 50):
            await asyncio.gather(*(s.open() for s in subscribers[start : start + 50]))
        await asyncio.sleep(1.0)
        queue = [(brand, code) for brand, _, codes in brands for code in codes]
        random.shuffle(queue)
        stop = asyncio.Event()
        curve = MemoryCurve(server.process.pid, SECONDS)
        requests = [
            Request(json.dumps({"query": PRODUCT, "variables": {"c": c}}), {}) for c in load_codes
        ] + [
            Request(json.dumps({"query": SCAN, "variables": {"c": c}}), {})
            for c in load_codes[: LOAD_PRODUCTS // SCANS_PER_QUERIES]
        ]
        load = asyncio.create_task(
            run_wrk(server.port, requests, seconds=SECONDS, connections=WRK_CONNECTIONS)
        )
        sampler = asyncio.create_task(
            curve.sampling(SAMPLE_SECONDS, stop, lambda: native_memory(client, ADMIN_KEY))
        )
        sites = asyncio.create_task(_memory(client))
        reconnects = asyncio.create_task(_reconnects(subscribers, stop))
        driver = asyncio.create_task(_alerts(client, queue, stop))
        wrk = await load
        stop.set()
        expected = await driver
        reconnected = await reconnects
        await sampler
        grown = await sites
        settled = await _settled(client, subscribers, expected)
        lapsed = await _metric(client, 'proofgate_relay_items{event="lapsed"}')
        for subscriber in subscribers:
            await subscriber.close()
    print(f"Soak: the outbox drained and the alerts arrived {settled:.0f} s after the load")
    print(f"Soak: the gateway's memory report at half-time and at the end\n{grown}")
    _report(curve, wrk.per_second, wrk.errors, reconnected, lapsed, subscribers, expected)


def _report(
    curve: MemoryCurve,
    per_second: float,
    errors: int,
    reconnected: int,
    lapsed: float,
    subscribers: list[Subscriber],
    expected: Counter[str],
) -> None:
    duplicated = sum(len(s.received) - len(set(s.received)) for s in subscribers)
    lost = sum(max(0, expected[s.brand] - len(set(s.received))) for s in subscribers)
    curve.print()
    print_table(
        "Soak: bars",
        [
            *curve.bar_rows(),
            ("lapsed leases", f"{lapsed:.0f}", "0"),
            ("alerts duplicated at a subscriber", str(duplicated), "0"),
            ("alerts lost at a subscriber", str(lost), "0"),
            ("alerts raised", str(sum(expected.values())), "-"),
            ("subscribers / reconnects", f"{len(subscribers)} / {reconnected}", "-"),
            ("wrk requests/s (errors)", f"{per_second:.0f} ({errors})", "-"),
        ],
        ("measure", "value", "target"),
    )


async def run() -> None:
    if WRK is None:
        print("Soak: skipped, wrk is not installed")
        return
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        port = free_port()
        command = [
            sys.executable, "-m", "api.cli.main", "serve",
            "--port", str(port), "--data-dir", str(root / "data"),
        ]  # fmt: skip
        env = {**ENV, "PROOFGATE_TRACEMALLOC_FRAMES": str(TRACEMALLOC_FRAMES)}
        with serving("soak", command, port=port, probe="/health", log_dir=root, env=env) as server:
            await _soak(server)
