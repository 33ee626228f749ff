"""The gateway's own CPU per request on the embedded store and on DynamoDB.

``python -m bench backends``. Three ``proofgate serve`` processes, one on a
SQLite file and two on DynamoDB (one with the exact cache on, measured warm
against the embedded store uncached: issue 33's bar), those against moto's server behind a
keep-alive front (``bench._moto``: DynamoDB keeps a client's connections
alive, moto's development server does not, and opening a TCP connection per
call must not be charged to the gateway), which replays moto's recorded
answers once the data is in, since moto's own reads walk its table. Load
comes from ``wrk`` (1 thread,
4 keep-alive connections); each server's CPU is read from
``/proc/<pid>/stat`` (user + system, all threads) around each run, less what
the same process burns idle over the same time (measured first, both servers
idle side by side, and printed: the idle budget is 0.5% of a core). Rounds
alternate the servers, and the median of each round's ratio is reported, so
a busy machine weighs on both sides. Beside each shape: its storage calls and
capacity units per request, from ``X-Proofgate-Trace: 1`` on each backend.

The section also times one Query response of 51 products decoded both ways
(botocore's parser and the codec as it was, against the data plane's
``orjson.loads`` and ``decode``), in interleaved rounds of CPU time.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import api
from ._harness import print_table
from ._server import Server, free_port, post_json, serving
from ._wrk import WRK, run_wrk

__all__ = ["cpu_seconds", "run"]

CONNECTIONS = 4
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
SECONDS = int(os.environ.get("BENCH_SECONDS", "8"))
WARMUP_SECONDS = 2
IDLE_SECONDS = 10
SETTLE_SECONDS = 3
"""After seeding: the relay's outbox work (alerts, webhooks) settles first."""
PRODUCTS = 100
QUIET_WINDOW_SECONDS = 0.5
QUIET_PERCENT = 2.0
"""Within this much of idle (per cent of a core) a server counts as quiet."""
QUIET_TIMEOUT_SECONDS = 30
TABLE = "bench"
REGION = "us-east-1"
SHAPES = api.SHAPES
BARS = {api.PAGE_SHAPE: 2.0, api.VERIFY_SHAPE: 2.0}
"""DynamoDB CPU per request / the embedded store's (issue 21)."""
CACHED_BARS = {api.PAGE_SHAPE: 1.0}
"""DynamoDB with a warm exact cache / the embedded store uncached (issue 33)."""
CACHED = "dynamodb cached"
"""A third gateway on the same table with ``PROOFGATE_CACHE=on``: its own
brand, so the other DynamoDB gateway's writes are none of its keys."""
IDLE_BAR = 0.5
"""Per cent of one core, idle with no subscribers, either backend (issue 21)."""
_AWS = {
    "AWS_ACCESS_KEY_ID": "bench",
    "AWS_SECRET_ACCESS_KEY": "bench",
    "AWS_EC2_METADATA_DISABLED": "true",
}
_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process, all its threads, from ``/proc``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


@contextmanager
def _moto(log_dir: Path) -> Iterator[str]:
    port = free_port()
    with (log_dir / "moto.log").open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "bench._moto", "--port", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=Path(__file__).resolve().parents[1],
        )
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                    break
                except OSError:
                    if time.monotonic() > deadline or process.poll() is not None:
                        raise RuntimeError("moto's keep-alive front did not start") from None
                    time.sleep(0.1)
            yield f"http://127.0.0.1:{port}"
        finally:
            process.terminate()
            process.wait(timeout=10)


def _replay(endpoint: str) -> None:
    """From here on moto's recorded bytes answer (``bench._moto.Front``)."""
    request = urllib.request.Request(endpoint + "/__replay", data=b"{}", method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        response.read()


def _serve(name: str, data_dir: Path, log_dir: Path, env: dict[str, str]) -> Any:
    port = free_port()
    command = [
        sys.executable, "-m", "api.cli.main", "serve",
        "--host", "127.0.0.1", "--port", str(port), "--data-dir", str(data_dir),
    ]  # fmt: skip
    # /ready, not /health: a DynamoDB gateway whose first check of the store
    # ran out of time answers /health while it checks again.
    return serving(
        name, command, port=port, probe="/ready", log_dir=log_dir, env={**api.GATEWAY_ENV, **env}
    )


PROFILE = Path(__file__).resolve().parents[1] / "api" / "cli" / "capacity-profile.json"
"""What ``proofgate capacity`` reads (package data, from the installed package):
the embedded store's traced calls per operation, whose capacity follows
DynamoDB's rules (moto's does not)."""
PROFILE_NAMES = {
    api.PAGE_SHAPE: "page",
    api.VERIFY_SHAPE: "verifyProduct",
    api.SMALL_SHAPE: "viewer",
}


@dataclass(frozen=True)
class Shape:
    calls: int
    units: float
    trace: tuple[dict[str, Any], ...] = ()


def _write_profile(shapes: dict[tuple[str, str], Shape]) -> None:
    operations = {
        PROFILE_NAMES[operation]: [
            {k: call.get(k) for k in ("accessPattern", "operation", "capacityUnits")}
            for call in shapes[(operation, "embedded")].trace
        ]
        for operation in SHAPES
    }
    document = {
        "source": "python -m bench backends: one traced request of each shape on the embedded "
        "store (a brand key, cached: its AP20 read is outside the trace)",
        "operations": operations,
    }
    PROFILE.write_text(json.dumps(document, indent=2) + "\n")


def _traced(server: Server, operation: str, fixture: api.Fixture) -> Shape:
    request = api._requests(operation, fixture)[0]
    headers = {**request.headers, "X-Proofgate-Trace": "1"}
    if "Authorization" not in headers:
        headers["Authorization"] = f"Bearer {fixture.brand_key}"
    extensions = post_json(server, json.loads(request.body), headers).get("extensions")
    trace: dict[str, Any] = extensions.get("trace", {}) if isinstance(extensions, dict) else {}
    calls = trace.get("calls", [])
    units = sum(float(c.get("capacityUnits") or 0) for c in calls)
    return Shape(len(calls), units, tuple(calls))


def _idle(servers: list[Server]) -> dict[str, float]:
    """Per cent of one core each server burns with no request and no subscriber."""
    before = {s.name: cpu_seconds(s.process.pid) for s in servers}
    start = time.monotonic()
    time.sleep(IDLE_SECONDS)
    elapsed = time.monotonic() - start
    return {s.name: 100 * (cpu_seconds(s.process.pid) - before[s.name]) / elapsed for s in servers}


async def _quiet(server: Server, idle_percent: float) -> None:
    """Until the server's CPU is back near idle: a verification's outbox item
    is worked by the relay after the response (on the DynamoDB stand-in, with
    reads moto answers slowly), and that work belongs to the run that caused
    it, not to the next one."""
    deadline = time.monotonic() + QUIET_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        before = cpu_seconds(server.process.pid)
        await asyncio.sleep(QUIET_WINDOW_SECONDS)
        busy = 100 * (cpu_seconds(server.process.pid) - before) / QUIET_WINDOW_SECONDS
        if busy <= idle_percent + QUIET_PERCENT:
            return


async def _per_request(
    server: Server, operation: str, fixture: api.Fixture, idle_percent: float
) -> float:
    """Milliseconds of the server's CPU per request under load, with the work
    it leaves behind, idle subtracted."""
    requests = api._requests(operation, fixture)
    await run_wrk(server.port, requests, seconds=WARMUP_SECONDS, connections=CONNECTIONS)
    await _quiet(server, idle_percent)
    before, start = cpu_seconds(server.process.pid), time.monotonic()
    result = await run_wrk(server.port, requests, seconds=SECONDS, connections=CONNECTIONS)
    await _quiet(server, idle_percent)
    used = cpu_seconds(server.process.pid) - before
    idle = idle_percent / 100 * (time.monotonic() - start)
    print(
        f"({server.name}, {operation}: {result.requests} requests, {result.errors} errors, "
        f"{used:.2f} s CPU, {idle:.3f} s of it idle)",
        flush=True,
    )
    return 1000 * (used - idle) / max(1, result.requests)


Collected = dict[tuple[str, str], list[float]]


async def _rounds(
    servers: list[Server], fixtures: dict[str, api.Fixture], idle: dict[str, float]
) -> Collected:
    collected: Collected = {}
    for round_index in range(ROUNDS):
        for operation in SHAPES:
            order = servers if round_index % 2 == 0 else servers[::-1]
            for server in order:
                cost = await _per_request(
                    server, operation, fixtures[server.name], idle[server.name]
                )
                collected.setdefault((operation, server.name), []).append(cost)
    return collected


def _median_ratio(ours: list[float], theirs: list[float]) -> float:
    return statistics.median(o / t for o, t in zip(ours, theirs, strict=True))


def _decode_benchmark() -> tuple[float, float]:
    """Median CPU microseconds per decode of one 51-product Query response."""
    import orjson
    from botocore.parsers import create_parser
    from botocore.session import get_session

    from storage.dynamodb._responses import query_result
    from tests._support import botocore_codec

    shape = get_session().get_service_model("dynamodb").operation_model("Query").output_shape
    parser = create_parser("json")
    body = json.dumps(_query_response()).encode()

    def botocore_path() -> object:
        parsed = parser.parse({"status_code": 200, "headers": {}, "body": body}, shape)
        return botocore_codec.query_result(parsed)

    def data_plane() -> object:
        return query_result(orjson.loads(body))

    assert repr(botocore_path()) == repr(data_plane())
    samples: dict[Callable[[], object], list[float]] = {botocore_path: [], data_plane: []}
    for _ in range(40):
        for decode, times in samples.items():
            start = time.process_time()
            for _ in range(10):
                decode()
            times.append((time.process_time() - start) / 10 * 1e6)
    return statistics.median(samples[botocore_path]), statistics.median(samples[data_plane])


def _query_response() -> dict[str, Any]:
    items = [
        {
            "PK": {"S": f"PRODUCT#p{i:05d}"},
            "SK": {"S": "META"},
            "GSI1PK": {"S": "BRAND#b1"},
            "GSI1SK": {"S": f"PRODUCT#2026-01-01T00:00:{i:02d}.000000Z"},
            "entity": {"S": "Product"},
            "id": {"S": f"p{i:05d}"},
            "brandId": {"S": "b1"},
            "name": {"S": f"Product {i}"},
            "sku": {"S": f"SKU-{i:05d}"},
            "status": {"S": "ACTIVE"},
            "scanCount": {"N": str(i * 7)},
            "version": {"N": "3"},
            "createdAt": {"S": "2026-01-01T00:00:00Z"},
            "verificationCode": {"S": "abcdEFGH1234"},
            "claimed": {"BOOL": False},
            "certificate": {"M": {"hash": {"S": "ab" * 32}, "signature": {"S": "cd" * 44}}},
        }
        for i in range(51)
    ]
    return {
        "Items": items,
        "Count": 51,
        "ScannedCount": 51,
        "ConsumedCapacity": {"TableName": TABLE, "CapacityUnits": 6.5},
    }


async def run() -> None:
    if WRK is None:
        print("\n## backends: skipped: wrk is not installed (Debian: apt-get install wrk)")
        return
    for name, value in _AWS.items():
        os.environ.setdefault(name, value)
    from storage.dynamodb import create_table

    with tempfile.TemporaryDirectory() as directory, _moto(Path(directory)) as endpoint:
        root = Path(directory)
        await create_table(table_name=TABLE, region=REGION, endpoint_url=endpoint)
        shared = root / "dynamodb-secrets"
        subprocess.run(
            [sys.executable, "-m", "api.cli.main", "init-secrets", str(shared)],
            check=True,
            capture_output=True,
            cwd=Path(__file__).resolve().parents[1],
        )
        dynamodb_env = {
            "PROOFGATE_BACKEND": "dynamodb",
            "PROOFGATE_DYNAMODB_ENDPOINT": endpoint,
            "PROOFGATE_TABLE": TABLE,
            "PROOFGATE_AWS_REGION": REGION,
            **_AWS,
        }
        with (
            _serve("embedded", root / "embedded", root, {}) as embedded,
            _serve("dynamodb", shared, root, dynamodb_env) as dynamodb,
            _serve(CACHED, shared, root, {**dynamodb_env, "PROOFGATE_CACHE": "on"}) as cached,
        ):
            servers = [embedded, dynamodb, cached]
            # moto copies its table for each action of a transaction: small batches.
            fixtures = {s.name: api._seed(s, PRODUCTS, batch=10) for s in servers}
            for operation in SHAPES:  # the cached gateway's trace is of a warm cache
                _traced(cached, operation, fixtures[CACHED])
            shapes = {
                (operation, s.name): _traced(s, operation, fixtures[s.name])
                for operation in SHAPES
                for s in servers
            }
            await asyncio.sleep(SETTLE_SECONDS)
            _replay(endpoint)
            idle = _idle(servers)
            collected = await _rounds(servers, fixtures, idle)
    _write_profile(shapes)
    _report(collected, shapes, idle, _decode_benchmark())


def _report(
    collected: Collected,
    shapes: dict[tuple[str, str], Shape],
    idle: dict[str, float],
    decode: tuple[float, float],
) -> None:
    rows = []
    ratios, cached_ratios = {}, {}
    names = ("embedded", "dynamodb", CACHED)
    for operation in SHAPES:
        embedded, dynamodb, cached = (collected[(operation, name)] for name in names)
        ratios[operation] = _median_ratio(dynamodb, embedded)
        cached_ratios[operation] = _median_ratio(cached, embedded)
        calls = [shapes[(operation, name)] for name in names]
        rows.append(
            (
                operation,
                *(" / ".join(f"{c:.2f}" for c in costs) for costs in (embedded, dynamodb, cached)),
                f"{ratios[operation]:.2f}x",
                f"<= {BARS[operation]:.1f}x" if operation in BARS else "-",
                f"{cached_ratios[operation]:.2f}x",
                f"<= {CACHED_BARS[operation]:.1f}x" if operation in CACHED_BARS else "-",
                " / ".join(str(c.calls) for c in calls),
                " / ".join(f"{c.units:g}" for c in calls),
            )
        )
    print_table(
        f"backends: gateway CPU ms per request (idle subtracted), wrk 1 thread, {CONNECTIONS} "
        f"keep-alive connections, {ROUNDS} interleaved rounds of {SECONDS} s; DynamoDB = moto "
        "behind a keep-alive front",
        rows,
        (
            "operation",
            "embedded ms/round",
            "dynamodb ms/round",
            "dynamodb cached ms/round",
            "dynamodb / embedded",
            "bar",
            "cached / embedded",
            "bar",
            "storage calls (emb / ddb / cached)",
            "capacity units (emb / ddb / cached)",
        ),
    )
    print(
        "\nStorage calls and units are one traced request's (with a brand key, whose own "
        "AP20 GetItem is read before the trace opens); the cached gateway's are of a warm "
        "cache (PROOFGATE_CACHE=on)."
    )
    print_table(
        "backends: idle CPU, no requests, no subscribers",
        [(name, f"{percent:.2f}%", f"< {IDLE_BAR}%") for name, percent in idle.items()],
        ("backend", "CPU, % of one core", "bar"),
    )
    before, after = decode
    print_table(
        "backends: one Query response of 51 products decoded (CPU, median of 40 rounds)",
        [
            ("botocore's parser + the codec (before)", f"{before:,.0f}"),
            ("orjson.loads + decode (the data plane)", f"{after:,.0f}"),
        ],
        ("decode", "us"),
    )
    print("\nBudgets (issue 21; a shared machine weighs on both sides alike):")
    for operation, bar in BARS.items():
        ok = ratios[operation] <= bar
        print(f"  {'ok  ' if ok else 'MISS'} {operation}: {ratios[operation]:.2f}x <= {bar:.1f}x")
    for operation, bar in CACHED_BARS.items():
        ok = cached_ratios[operation] <= bar
        print(
            f"  {'ok  ' if ok else 'MISS'} {operation}, DynamoDB with a warm cache / embedded "
            f"uncached (issue 33): {cached_ratios[operation]:.2f}x <= {bar:.1f}x"
        )
    for name, percent in idle.items():
        ok = percent < IDLE_BAR
        print(f"  {'ok  ' if ok else 'MISS'} idle {name}: {percent:.2f}% < {IDLE_BAR}% of a core")
