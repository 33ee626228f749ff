"""Alert latency and fan-out, against real gateway processes over WebSockets.

- scan to subscriber, one process: a subscriber on gateway A, a scan sent to A
  that raises CLAIMED_PRODUCT_SCAN (a fresh claimed product per sample, so
  no alert is deduplicated); from sending the scan to the alert arriving.
- scan to subscriber, two processes: the same scan sent to A, the subscriber
  on gateway B (same SQLite file), which learns of it by tailing AP12. B's
  relay is told never to poll, so every alert it delivers came from A.
- the same through Redis: a second pair of gateways with ``PROOFGATE_REDIS_URL``
  on a redis-server started for the run (skipped without the binary).
- fan-out: 1,000, then 10,000 WebSocket connections with one subscription
  each on A, one alert, the time until each of them has it; and A's resident
  memory per idle subscription, from its RSS before and after they
  connected. The sockets are held by a C client (``bench/fanout.c``), not by
  this process: decoding 1,000 frames in Python costs as much CPU as the
  gateway spends sending them, on the same cores (docs/design.md,
  Performance budgets). Without a C compiler the fan-out is skipped with a
  message.
- fan-out against ``serve --workers 2`` on Redis: the 10,000 sockets again,
  spread by the kernel over the two workers; the bar is per gateway
  (docs/design.md, Alert fan-out), and the one-process row stays beside it.
- scan to subscriber with 10,000 filtered subscriptions in the process: the
  C client holds 9,999 subscriptions of the brand with 200 different
  filters (most name three of the products scanned, so each alert matches
  about 120 of them and is sent to them; the rest name types and countries
  the scans never raise), and one Python subscriber's filter names every
  product scanned; from sending the scan over HTTP to the alert arriving on
  that socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import resource
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

from ._fanout_client import CC, build, fanout
from ._harness import print_table
from ._server import Server, free_port, redis_serving, serving

LOCAL_SAMPLES = 200
REMOTE_SAMPLES = 40
REDIS_SAMPLES = 200
SUBSCRIBERS = tuple(int(n) for n in os.environ.get("BENCH_FANOUT_SOCKETS", "1000,10000").split(","))
"""``BENCH_FANOUT_SOCKETS=1000`` leaves the 10,000 rows out (a quicker run)."""
LIBRARY_SIZES = SUBSCRIBERS[:1]
"""Sizes run again without the ``fanout`` lane (Strawberry's path)."""
FANOUT_ALERTS = 5
WORKERS_SOCKETS = SUBSCRIBERS[-1]
"""The size run again against ``serve --workers 2`` (the issue's bar is per
gateway, not per process)."""
WARM_SOCKETS = 8
FILTERED = 10_000
"""Live filtered subscriptions in the process: the C client's and one more."""
FILTERS = 200
FILTERED_SAMPLES = 200
MOST = max(*SUBSCRIBERS, FILTERED)
TAIL_INTERVAL_MS = 500
ADMIN_KEY = "bench-admin-" + uuid.uuid4().hex
ENV = {
    "PROOFGATE_ADMIN_KEY": ADMIN_KEY,
    "PROOFGATE_RATE_LIMIT": "off",
    "PROOFGATE_KEY_RATE_LIMIT": "off",
    "PROOFGATE_TAIL_INTERVAL_MS": str(TAIL_INTERVAL_MS),
    # The fan-out holds 10,000 subscriptions of one key to one brand, past the
    # per-key and per-brand quotas and the connections a production gateway
    # keeps (the process's own cap, 10,000 subscriptions, stays).
    "PROOFGATE_SUBSCRIPTIONS_PER_KEY": str(2 * MOST),
    "PROOFGATE_SUBSCRIPTIONS_PER_BRAND": str(2 * MOST),
    "PROOFGATE_ALERT_COST_PER_BRAND": str(100 * MOST),
    "PROOFGATE_MAX_CONNECTIONS": str(MOST + 256),
}
FanoutResult = tuple[list[float], float, tuple[float, float]]
"""Arrival samples (s), RSS per idle subscription (KB), and the gateway's
CPU time (user, system: from /proc) per alert delivered to one socket (us)."""
WITHOUT_FANOUT = {**ENV, "PROOFGATE_EXECUTION": "compiled,-fanout"}
"""The same gateway with Strawberry delivering every subscription: the
direct fan-out's with/without rows (docs/design.md, Alert fan-out)."""
_NO_COMPILER = "skipped: no C compiler (cc) to build bench/fanout.c; apt-get install gcc"
SUBSCRIBE = "subscription($b: ID!) { threatAlerts(brandId: $b) { id type } }"
FILTERED_SUBSCRIBE = """subscription($b: ID!, $f: AlertFilterInput) {
    threatAlerts(brandId: $b, filter: $f) { id type }
}"""
REGISTER_BRAND = """mutation($d: String!) {
    registerBrand(input: {name: "Bench", domain: $d, plan: PRO}) { apiKey brand { id } }
}"""
GRANT = """mutation($b: ID!, $k: String!) {
    grantCredits(brandId: $b, amount: "100000", idempotencyKey: $k) { id }
}"""
REGISTER_PRODUCT = """mutation($b: ID!, $n: String!) {
    registerProduct(input: {brandId: $b, name: $n}) { id verificationCode }
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
    codes = [code for _, code in await _products(client, brand, key, products, claimed)]
    return brand, key, codes


async def _products(
    client: httpx.AsyncClient, brand: str, key: str, count: int, claimed: bool = True
) -> list[tuple[str, str]]:
    """``count`` new products of ``brand``: their ids and codes."""
    made = []
    for _ in range(count):
        data = await _graphql(client, REGISTER_PRODUCT, {"b": brand, "n": uuid.uuid4().hex}, key)
        product = data["registerProduct"]
        if claimed:
            await _graphql(client, CLAIM, {"c": product["verificationCode"]})
        made.append((product["id"], product["verificationCode"]))
    return made


def subscription_messages(key: str, brand: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The connection_init and subscribe messages of one subscriber, for the
    Python client and the C one alike."""
    init = {"type": "connection_init", "payload": {"authorization": f"Bearer {key}"}}
    subscribe = {
        "id": "1",
        "type": "subscribe",
        "payload": {"query": SUBSCRIBE, "variables": {"b": brand}},
    }
    return init, subscribe


async def _subscribe(
    server: Server, key: str, brand: str, alert_filter: dict[str, Any] | None = None
) -> ClientConnection:
    init, subscribe = subscription_messages(key, brand)
    if alert_filter is not None:
        subscribe = _filtered_message("1", brand, alert_filter)
    socket = await connect(
        f"ws://127.0.0.1:{server.port}/graphql", subprotocols=["graphql-transport-ws"]
    )  # type: ignore[list-item]
    await socket.send(json.dumps(init))
    assert json.loads(await socket.recv())["type"] == "connection_ack"
    await socket.send(json.dumps(subscribe))
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


def _processes(server: Server) -> list[int]:
    """The gateway's process and, under ``serve --workers``, its workers
    (and theirs): CPU and memory are the gateway's, however many processes."""
    pids, todo = [], [server.process.pid]
    while todo:
        pid = todo.pop()
        pids.append(pid)
        with contextlib.suppress(OSError):
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
            todo += [int(child) for child in children]
    return pids


def _cpu_seconds(server: Server) -> tuple[float, float]:
    """The gateway's user and system CPU time so far, over its processes."""
    tick = os.sysconf("SC_CLK_TCK")
    user = system = 0
    for pid in _processes(server):
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            user, system = user + int(fields[11]), system + int(fields[12])
    return user / tick, system / tick


def _rss_kb(server: Server) -> int:
    total = 0
    for pid in _processes(server):
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
    if total == 0:
        raise RuntimeError("no VmRSS")
    return total


async def subscriptions(client: httpx.AsyncClient) -> int:
    """Live subscriptions, as the gateway counts them (``/metrics``)."""
    response = await client.get("/metrics", headers={"Authorization": f"Bearer {ADMIN_KEY}"})
    for line in response.text.splitlines():
        if line.startswith("proofgate_subscriptions "):
            return int(float(line.split()[1]))
    raise RuntimeError("/metrics has no proofgate_subscriptions")


async def _none_subscribed(client: httpx.AsyncClient) -> None:
    """The sockets of the measurement before have gone: the process's cap
    (10,000) holds the next one's sockets only without them."""
    deadline = time.monotonic() + 30
    while (live := await subscriptions(client)) > 0:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{live} subscriptions still live 30 s after their sockets closed")
        await asyncio.sleep(0.1)


async def _all_subscribed(client: httpx.AsyncClient, count: int) -> None:
    """The client's ``ready`` means every subscribe was sent; an alert raised
    before the gateway has started them all would miss some sockets."""
    deadline = time.monotonic() + 30
    while (live := await subscriptions(client)) < count:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{live} of {count} subscriptions live after 30 s")
        await asyncio.sleep(0.1)


def _check_alert(message: dict[str, Any], seen: set[str]) -> None:
    """The frames timed are this run's alerts, each a new one."""
    alert = message["payload"]["data"]["threatAlerts"]
    if alert["type"] != "CLAIMED_PRODUCT_SCAN" or alert["id"] in seen:
        raise RuntimeError(f"not a new CLAIMED_PRODUCT_SCAN alert: {message}")
    seen.add(alert["id"])


async def _fanout(
    client: httpx.AsyncClient,
    server: Server,
    key: str,
    brand: str,
    codes: list[str],
    binary: Path,
    sockets: int,
) -> FanoutResult:
    """Arrival minus the moment before the verify was sent, per socket and
    alert; both are CLOCK_MONOTONIC (``time.monotonic_ns`` and the client's)."""
    await _none_subscribed(client)
    await subscriptions(client)  # /metrics's first answer is not the subscriptions' memory
    before = _rss_kb(server)
    init, subscribe = subscription_messages(key, brand)
    samples: list[float] = []
    seen: set[str] = set()
    async with fanout(
        binary,
        server.port,
        sockets=sockets,
        alerts=len(codes),
        init=init,
        subscribe=subscribe,
        timeout=60,
    ) as subscribers:
        await subscribers.ready()
        await _all_subscribed(client, sockets)
        await asyncio.sleep(1.0)
        per_subscription = (_rss_kb(server) - before) / sockets
        cpu = _cpu_seconds(server)
        for code in codes:
            started = time.monotonic_ns()
            await _graphql(client, VERIFY, {"c": code})
            arrival = await subscribers.arrival()
            _check_alert(arrival.message, seen)
            samples += [(stamp - started) / 1e9 for stamp in arrival.times_ns]
        user, system = (
            after - before for after, before in zip(_cpu_seconds(server), cpu, strict=True)
        )
        await subscribers.finish()
    return samples, per_subscription, (user * 1e6 / len(samples), system * 1e6 / len(samples))


def _filtered_message(operation: str, brand: str, alert_filter: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": operation,
        "type": "subscribe",
        "payload": {"query": FILTERED_SUBSCRIBE, "variables": {"b": brand, "f": alert_filter}},
    }


def _filters(product_ids: list[str]) -> list[dict[str, Any]]:
    """``FILTERS`` filters as partners send them: four in five name three of
    the products (each product in about three), the fifth types and
    countries no scan here raises."""
    count = len(product_ids)
    filters: list[dict[str, Any]] = []
    for j in range(FILTERS):
        if j % 5 == 4:
            filters.append({"types": ["BURST_SCAN", "HASH_TAMPERING"], "countries": ["DE", "JP"]})
        else:
            picks = {product_ids[(j * step + step - 1) % count] for step in (1, 7, 13)}
            filters.append({"productIds": sorted(picks)})
    return filters


async def _filtered(
    client: httpx.AsyncClient,
    server: Server,
    key: str,
    brand: str,
    products: list[tuple[str, str]],
    binary: Path,
) -> list[float]:
    """Scan to subscriber with ``FILTERED`` live filtered subscriptions: the
    C client holds all but the measured one, taking the alerts their filters
    match (``alerts=0``); it exits if the gateway closes any of them."""
    await _none_subscribed(client)
    ids = [product for product, _ in products]
    init, _ = subscription_messages(key, brand)
    messages = [_filtered_message("1", brand, f) for f in _filters(ids)]
    async with fanout(
        binary,
        server.port,
        sockets=FILTERED - 1,
        alerts=0,
        init=init,
        subscribe=messages,
        timeout=60,
    ) as held:
        await held.ready()
        await _all_subscribed(client, FILTERED - 1)
        socket = await _subscribe(server, key, brand, {"productIds": ids})
        await _all_subscribed(client, FILTERED)
        try:
            samples = await _latencies(client, socket, [code for _, code in products])
        finally:
            await socket.close()
        held.holding()
    return samples


def _workers_skipped(compiled: bool, redis: bool) -> str | None:
    """Why the ``serve --workers 2`` row is missing."""
    if not compiled:
        return None  # the no-compiler message
    if not redis:
        return "skipped: redis-server not installed"
    return f"skipped: {WORKERS_SOCKETS:,} sockets need ulimit -n {WORKERS_SOCKETS + 512:,}"


def _descriptors_for(sockets: int) -> bool:
    """Whether the gateway, started from here, may hold ``sockets`` sockets:
    the soft descriptor limit is raised to what they need, within the hard one."""
    needed = sockets + 512
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return True
    if hard != resource.RLIM_INFINITY and hard < needed:
        return False
    resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
    return True


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
        [sys.executable, "-m", "api.cli.main", "serve", "--port", str(port), "--data-dir", data_dir]
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


def _fanout_tables(
    sockets: int, result: FanoutResult | None, skipped: str | None, lane: str = ""
) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """The fan-out's latency row and memory rows, or rows saying why they
    are missing (``skipped``, or no compiler)."""
    name = f"fan-out to {sockets:,} sockets{lane}"
    memory_name = f"idle subscription (KB), {sockets:,} sockets{lane}"
    cpu_name = f"gateway CPU per alert per socket (us), {sockets:,} sockets{lane}"
    if result is None:
        why = skipped or _NO_COMPILER
        return (name, "0", "-", "-", why), [(memory_name, "-", why)]
    samples, memory, (user, system) = result
    return _row(name, samples, "p99 < 100"), [
        (memory_name, f"{memory:.1f}", "<= 20"),
        (cpu_name, f"{user + system:.1f} ({user:.1f} user, {system:.1f} system)", "-"),
    ]


async def _without_fanout(
    root: Path, binary: Path, sizes: tuple[int, ...]
) -> dict[int, FanoutResult]:
    """The fan-out rows again on a gateway without the ``fanout`` lane."""
    port = free_port()
    command = [
        sys.executable, "-m", "api.cli.main", "serve", "--port", str(port),
        "--data-dir", str(root / "data-library"),
    ]  # fmt: skip
    results: dict[int, FanoutResult] = {}
    with serving(
        "alerts-library", command, port=port, probe="/health", log_dir=root, env=WITHOUT_FANOUT
    ) as server:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            brand, key, codes = await _seed(client, 1 + len(sizes) * FANOUT_ALERTS)
            warm = await _subscribe(server, key, brand)  # the text validated, as on A
            await warm.close()
            fanout_codes = iter(codes[1:])
            for sockets in sizes:
                batch = [next(fanout_codes) for _ in range(FANOUT_ALERTS)]
                results[sockets] = await _fanout(client, server, key, brand, batch, binary, sockets)
    return results


async def _workers_fanout(root: Path, binary: Path, redis_url: str, sockets: int) -> FanoutResult:
    """The fan-out row against ``serve --workers 2`` on Redis: the kernel
    hands each worker its share of the sockets; the worker whose relay
    raises an alert delivers it to its own and publishes it, and the other
    delivers what Redis brings it. Through the table tail instead, the other
    worker's sockets would wait for its next read of AP12 (``TAIL_INTERVAL_MS``)."""
    port = free_port()
    command = [
        sys.executable, "-m", "api.cli.main", "serve", "--port", str(port), "--workers", "2",
        "--data-dir", str(root / "data-workers"),
    ]  # fmt: skip
    env = {**ENV, "PROOFGATE_REDIS_URL": redis_url}
    with serving(
        "alerts-workers", command, port=port, probe="/health", log_dir=root, env=env
    ) as server:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            brand, key, codes = await _seed(client, FANOUT_ALERTS)
            # The text validated in both workers, as on A: the kernel spreads
            # these between them as it spreads the measured sockets.
            for _ in range(WARM_SOCKETS):
                warm = await _subscribe(server, key, brand)
                await warm.close()
            return await _fanout(client, server, key, brand, codes, binary, sockets)


async def run() -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        binary = build(root) if CC is not None else None
        many = _descriptors_for(MOST)
        sizes = SUBSCRIBERS if many else tuple(n for n in SUBSCRIBERS if _descriptors_for(n))
        with _two_gateways(root, "alerts", ENV) as (a, b):
            async with httpx.AsyncClient(base_url=a.url, timeout=30) as client:
                alerts = len(SUBSCRIBERS) * FANOUT_ALERTS
                brand, key, codes = await _seed(client, LOCAL_SAMPLES + alerts)
                local_socket = await _subscribe(a, key, brand)
                local = await _latencies(client, local_socket, codes[:LOCAL_SAMPLES])
                await local_socket.close()
                spread: dict[int, FanoutResult | None] = dict.fromkeys(SUBSCRIBERS)
                filtered: list[float] = []
                if binary is not None:
                    fanout_codes = iter(codes[LOCAL_SAMPLES:])
                    for sockets in sizes:
                        batch = [next(fanout_codes) for _ in range(FANOUT_ALERTS)]
                        spread[sockets] = await _fanout(
                            client, a, key, brand, batch, binary, sockets
                        )
                    if many:
                        products = await _products(client, brand, key, FILTERED_SAMPLES)
                        filtered = await _filtered(client, a, key, brand, products, binary)
            remote = await _remote(a, b, REMOTE_SAMPLES, TAIL_INTERVAL_MS / 1000)
        library = {} if binary is None else await _without_fanout(root, binary, LIBRARY_SIZES)
        workers: FanoutResult | None = None
        with redis_serving(root) as redis_url:
            through_redis: list[float] = []
            if redis_url is not None:
                env = {**ENV, "PROOFGATE_REDIS_URL": redis_url}
                with _two_gateways(root, "alerts-redis", env) as (a, b):
                    through_redis = await _remote(a, b, REDIS_SAMPLES, 0.02)
                if binary is not None and _descriptors_for(WORKERS_SOCKETS):
                    workers = await _workers_fanout(root, binary, redis_url, WORKERS_SOCKETS)
    rows = [
        _row("one process", local, "p99 < 50"),
        _row("two processes (tail)", remote, f"p99 < {TAIL_INTERVAL_MS + 100}"),
    ]
    if through_redis:
        rows.append(_row("two processes (redis)", through_redis, "p99 < 50"))
    else:
        rows.append(("two processes (redis)", "0", "-", "-", "redis-server not installed"))
    filtered_name = f"one process, {FILTERED:,} filtered subscriptions"
    few = f"skipped: {MOST:,} sockets need ulimit -n {MOST + 512:,} (the hard limit is lower)"
    if filtered:
        rows.append(_row(filtered_name, filtered, "p99 < 50"))
    else:
        rows.append((filtered_name, "0", "-", "-", _NO_COMPILER if binary is None else few))
    memory_rows = []
    for sockets, result in spread.items():
        fanout_row, memory = _fanout_tables(sockets, result, None if binary is None else few)
        rows.append(fanout_row)
        memory_rows += memory
    for sockets, result in library.items():
        fanout_row, memory = _fanout_tables(sockets, result, None, ", without fanout")
        rows.append(fanout_row)
        memory_rows += memory
    fanout_row, memory = _fanout_tables(
        WORKERS_SOCKETS,
        workers,
        _workers_skipped(binary is not None, bool(through_redis)),
        ", serve --workers 2 (redis)",
    )
    rows.append(fanout_row)
    memory_rows += memory
    print_table(
        "Threat alerts: scan to subscriber (ms)", rows, ("path", "samples", "p50", "p99", "target")
    )
    print_table("Threat alerts: memory", memory_rows, ("measure", "value", "target"))
