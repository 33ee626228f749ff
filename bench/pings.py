"""Keep-alive rounds over 10,000 sockets, and the fan-out they meet
(docs/design.md, Keep-alives), with the ``keepalive`` lane and without it
(``PROOFGATE_EXECUTION=compiled,-keepalive``: Strawberry's handler sends
each ping and reads each pong), one gateway process per row:

- CPU per ping round per socket: 10,000 sockets held by the C client
  (``bench/fanout.c``, which answers each ping with a pong) and one Python
  socket that counts the rounds by its own pings; the gateway's user and
  system time (/proc) from one of its pings to the ``ROUNDS``-th after,
  less what the gateway spends idle over as long (measured before the
  sockets connected), per round and per socket. CPU time, not wall time:
  it does not depend on what else runs on the machine.
- fan-out to 10,000 sockets while rounds run: ``ALERTS`` alerts, one
  after the other, to every socket; with a round every second most alerts
  meet one, at the default 15 s few do. Latencies are loaded on a shared
  machine; the rows of one run are comparable with each other.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import httpx
from websockets.asyncio.client import ClientConnection, connect

from ._fanout_client import CC, FanoutClient, build, fanout
from ._harness import print_table
from ._server import Server, free_port, serving
from .alerts import (
    ENV,
    VERIFY,
    _all_subscribed,
    _check_alert,
    _cpu_seconds,
    _descriptors_for,
    _graphql,
    _row,
    _seed,
    subscription_messages,
)

SOCKETS = int(os.environ.get("BENCH_PINGS_SOCKETS", "10000"))
"""``BENCH_PINGS_SOCKETS=500``: a quick run."""
ALERTS = 20
ROUNDS = 5
IDLE_SECONDS = 3.0
INTERVALS = os.environ.get("BENCH_PINGS_INTERVALS", "1000,15000").split(",")
"""Keep-alive intervals (ms) to run, each with the lane and without:
``BENCH_PINGS_INTERVALS=15000`` runs the default's rows alone."""
LANES = (("keepalive", "compiled"), ("library", "compiled,-keepalive"))


class _Rounds:
    """A Python socket that answers the server's pings and counts them: one
    a round."""

    def __init__(self, socket: ClientConnection) -> None:
        self.socket = socket
        self.pings = 0
        self.ping = asyncio.Event()

    async def read(self) -> None:
        async for raw in self.socket:
            if json.loads(raw)["type"] == "ping":
                await self.socket.send('{"type":"pong"}')
                self.pings += 1
                self.ping.set()

    async def next(self) -> None:
        self.ping.clear()
        await asyncio.wait_for(self.ping.wait(), 60)


Cpu = tuple[float, float]
"""User and system time (s, or us per socket per round)."""


def _minus(after: Cpu, before: Cpu) -> Cpu:
    return after[0] - before[0], after[1] - before[1]


async def _idle_cpu(server: Server) -> Cpu:
    """The gateway's user and system CPU seconds a second with no socket open."""
    before, started = _cpu_seconds(server), time.monotonic()
    await asyncio.sleep(IDLE_SECONDS)
    user, system = _minus(_cpu_seconds(server), before)
    elapsed = time.monotonic() - started
    return user / elapsed, system / elapsed


async def _session(
    root: Path, binary: Path, interval_ms: str, execution: str
) -> tuple[Cpu | None, list[float]]:
    """CPU per round per socket (us), and the fan-out's arrival samples (s)."""
    port = free_port()
    command = [
        sys.executable, "-m", "api.cli.main", "serve", "--port", str(port),
        "--data-dir", str(root / f"data-{execution}-{interval_ms}"),
    ]  # fmt: skip
    env = {**ENV, "PROOFGATE_WS_KEEPALIVE_MS": interval_ms, "PROOFGATE_EXECUTION": execution}
    with serving("pings", command, port=port, probe="/health", log_dir=root, env=env) as server:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            brand, key, codes = await _seed(client, ALERTS + 1)
            init, subscribe = subscription_messages(key, brand)
            warm = await _counting_socket(server, init)  # the text validated first
            await warm.socket.send(json.dumps(subscribe))
            await _all_subscribed(client, 1)
            await warm.socket.close()
            idle = await _idle_cpu(server)
            async with fanout(
                binary, port, sockets=SOCKETS, alerts=ALERTS, init=init,
                subscribe=subscribe, timeout=120,
            ) as subscribers:  # fmt: skip
                await subscribers.ready()
                await _all_subscribed(client, SOCKETS)
                rounds = await _counting_socket(server, init)
                reader = asyncio.create_task(rounds.read())
                try:
                    per_round = await _round_cpu(server, rounds, idle, interval_ms)
                    samples = await _alerts(client, subscribers, codes[1:])
                finally:
                    reader.cancel()
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await reader
                    await rounds.socket.close()
                await subscribers.finish()
    return per_round, samples


async def _counting_socket(server: Server, init: dict[str, object]) -> _Rounds:
    socket = await connect(
        f"ws://127.0.0.1:{server.port}/graphql",
        subprotocols=["graphql-transport-ws"],  # type: ignore[list-item]
    )
    await socket.send(json.dumps(init))
    assert json.loads(await socket.recv())["type"] == "connection_ack"
    return _Rounds(socket)


async def _round_cpu(server: Server, rounds: _Rounds, idle: Cpu, interval_ms: str) -> Cpu | None:
    """From one of the counting socket's pings to the ``ROUNDS``-th after,
    only with rounds at most 2 s apart (at 15 s it would take minutes)."""
    if int(interval_ms) > 2000:
        return None
    await rounds.next()
    before, started = _cpu_seconds(server), time.monotonic()
    for _ in range(ROUNDS):
        await rounds.next()
    elapsed = time.monotonic() - started
    user, system = _minus(_cpu_seconds(server), before)
    per = 1e6 / ROUNDS / (SOCKETS + 1)
    return (user - idle[0] * elapsed) * per, (system - idle[1] * elapsed) * per


async def _alerts(
    client: httpx.AsyncClient, subscribers: FanoutClient, codes: list[str]
) -> list[float]:
    samples: list[float] = []
    seen: set[str] = set()
    for code in codes:
        started = time.monotonic_ns()
        await _graphql(client, VERIFY, {"c": code})
        arrival = await subscribers.arrival()
        _check_alert(arrival.message, seen)
        samples += [(stamp - started) / 1e9 for stamp in arrival.times_ns]
    return samples


async def run() -> None:
    if CC is None:
        print("pings: skipped, no C compiler (cc) to build bench/fanout.c")
        return
    if not _descriptors_for(SOCKETS + 16):
        print(f"pings: skipped, {SOCKETS:,} sockets need ulimit -n {SOCKETS + 528:,}")
        return
    rows: list[tuple[str, ...]] = []
    cpu_rows: list[tuple[str, ...]] = []
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        binary = build(root)
        for interval_ms in INTERVALS:
            for lane, execution in LANES:
                per_round, samples = await _session(root, binary, interval_ms, execution)
                name = (
                    f"fan-out to {SOCKETS:,} sockets, pings every {int(interval_ms):,} ms, {lane}"
                )
                rows.append(_row(name, samples, "p99 < 100"))
                if per_round is not None:
                    user, system = per_round
                    cpu = f"{user + system:.1f} ({user:.1f} user, {system:.1f} system)"
                    cpu_rows.append((f"ping round, {SOCKETS:,} sockets, {lane}", cpu))
    print_table("Keep-alives: fan-out (ms)", rows, ("path", "samples", "p50", "p99", "target"))
    print_table("Keep-alives: gateway CPU per socket per round (us)", cpu_rows, ("row", "us"))
