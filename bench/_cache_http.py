"""The page of 50 and ``verifyProduct`` over HTTP with the storage cache on,
beside the same gateway with it off, bare Strawberry and Fastify + Mercurius
+ graphql-jit, in interleaved rounds of one run (docs/design.md, Storage cache).

Servers: ``uncached`` (``proofgate serve``, cache off), ``cached`` (cache
on: after the first request every page is a hit), ``cached-miss`` (cache on,
too small for a page: every page misses, the miss path's cost), ``responses``
(the storage cache and the response cache on, the page and the small query
registered and listed: after the first request each is answered from the
response cache; docs/design.md, Response cache),
``bare`` and ``mercurius`` (from memory, as in ``bench/api.py``). Each
gateway has a SQLite file of its own, seeded through its own API, since a
cache hears only its own process's writes.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from api.cli.cache_ratios import hit_ratios

from . import _mercurius
from ._harness import print_table
from ._server import Server, free_port, serving
from ._wrk import Request, WrkResult, run_wrk
from .api import (
    ADMIN_KEY,
    GATEWAY_ENV,
    PAGE,
    PAGE_SHAPE,
    SMALL_SHAPE,
    VERIFY_SHAPE,
    Fixture,
    _baseline,
    _call_summary,
    _requests,
    _seed,
    _trace,
)

__all__ = ["GATEWAYS", "measure"]

CONNECTIONS = 16
ROUNDS = 3
SECONDS = 10
WARMUP_SECONDS = 2
PRODUCTS = 120
GATEWAYS = {
    "uncached": {"PROOFGATE_CACHE": "off"},
    "cached": {"PROOFGATE_CACHE": "on"},
    "cached-miss": {"PROOFGATE_CACHE": "on", "PROOFGATE_CACHE_BYTES": "8192"},
    "responses": {
        "PROOFGATE_CACHE": "on",
        "PROOFGATE_RESPONSE_CACHE": "on",
        "PROOFGATE_RESPONSE_CACHE_OPERATIONS": "Page,Viewer",
    },
}
"""``cached-miss`` holds 8 KiB: a page of 50 never fits, so every page read
misses, measures its size and is refused; the brand (a small item) still hits."""
SMALL_NAMED = "query Viewer { viewer { role brandId __typename } }"
"""The small query as a registered operation must be: named."""
SHAPES = {
    PAGE_SHAPE: ("uncached", "cached", "cached-miss", "responses", "bare", "mercurius"),
    VERIFY_SHAPE: ("uncached", "cached"),
    SMALL_SHAPE: ("uncached", "responses", "bare", "mercurius"),
}
BAR_ONLY = os.environ.get("BENCH_CACHE_BAR_ONLY") == "1"
"""``BENCH_CACHE_BAR_ONLY=1``: only the rows the issue's bar is judged on
(the page of 50: cached, uncached, bare, Mercurius), in a third of the time."""
if BAR_ONLY:
    SHAPES = {PAGE_SHAPE: ("uncached", "cached", "bare", "mercurius")}


def _gateway(name: str, directory: Path, stack: ExitStack) -> Server:
    port = free_port()
    command = [
        sys.executable, "-m", "api.cli.main", "serve",
        "--host", "127.0.0.1", "--port", str(port), "--data-dir", str(directory / name),
    ]  # fmt: skip
    env = {**GATEWAY_ENV, **GATEWAYS[name]}
    if name == "responses":
        operations = directory / "operations"
        operations.mkdir()
        (operations / "page.graphql").write_text(PAGE)
        (operations / "viewer.graphql").write_text(SMALL_NAMED)
        env["PROOFGATE_OPERATIONS_DIR"] = str(operations)
    return stack.enter_context(
        serving(name, command, port=port, probe="/health", log_dir=directory, env=env)
    )


def _servers(directory: Path, stack: ExitStack) -> Iterator[Server]:
    for name in GATEWAYS:
        if not BAR_ONLY or name in ("uncached", "cached"):
            yield _gateway(name, directory, stack)
    port = free_port()
    bare = [sys.executable, "-m", "bench._bare", "--port", str(port)]
    yield stack.enter_context(_baseline("bare", bare, port, directory))
    if _mercurius.unavailable() is None:
        port = free_port()
        yield stack.enter_context(_baseline("mercurius", _mercurius.command(port), port, directory))


def _metrics(server: Server) -> str:
    request = urllib.request.Request(
        server.url + "/metrics", headers={"Authorization": f"Bearer {ADMIN_KEY}"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        text: str = response.read().decode()
    return text


def _responses_answered(server: Server) -> dict[str, tuple[float, float]]:
    """Hits and misses per operation of the response cache."""
    found: dict[str, list[float]] = {}
    for line in _metrics(server).splitlines():
        if not line.startswith("proofgate_response_cache_reads_total{"):
            continue
        labels, value = line.rsplit(" ", 1)
        operation = labels.split('operation="', 1)[1].split('"', 1)[0]
        counts = found.setdefault(operation, [0.0, 0.0])
        counts['result="hit"' not in labels] += float(value)
    return {operation: (hits, misses) for operation, (hits, misses) in found.items()}


def _scrape(server: Server) -> dict[str, float]:
    return hit_ratios(_metrics(server))


async def measure(directory: Path) -> None:
    with ExitStack() as stack:
        servers = {server.name: server for server in _servers(directory, stack)}
        fixtures = {name: _seed(servers[name], PRODUCTS) for name in GATEWAYS if name in servers}
        any_fixture = fixtures["uncached"]
        collected: dict[tuple[str, str], list[WrkResult]] = {}
        for round_index in range(ROUNDS):
            for shape, names in SHAPES.items():
                present = [n for n in names if n in servers]
                for name in present if round_index % 2 == 0 else present[::-1]:
                    requests = _requests(shape, fixtures.get(name, any_fixture))
                    if name == "responses" and shape == SMALL_SHAPE:
                        requests = [Request(json.dumps({"query": SMALL_NAMED}), {})]
                    port = servers[name].port
                    await run_wrk(port, requests, seconds=WARMUP_SECONDS, connections=CONNECTIONS)
                    result = await run_wrk(port, requests, seconds=SECONDS, connections=CONNECTIONS)
                    collected.setdefault((shape, name), []).append(result)
        traces = {
            (shape, name): _warm_trace(servers[name], shape, fixtures[name])
            for shape in SHAPES
            if shape != SMALL_SHAPE
            for name in ("uncached", "cached")
        }
        ratios = {
            name: _scrape(servers[name]) for name in ("cached", "cached-miss") if name in servers
        }
        answered = _responses_answered(servers["responses"]) if "responses" in servers else {}
    _report(collected, traces, ratios)
    _bar(collected, traces)
    if not answered:
        return
    print_table(
        "cache: the response cache over the run (/metrics, proofgate_response_cache_reads)",
        [(op, f"{hits:,.0f}", f"{misses:,.0f}") for op, (hits, misses) in answered.items()],
        ("operation", "hits", "misses (executed)"),
    )


def _warm_trace(server: Server, shape: str, fixture: Fixture) -> dict[str, Any]:
    """The second of two equal requests: the first fills what the load's
    writes (verifications change the products on the page) dropped."""
    _trace(server, shape, fixture)
    return _trace(server, shape, fixture)


def _median_ratio(ours: list[WrkResult], other: list[WrkResult]) -> str:
    pairs = zip(ours, other, strict=True)
    return f"{statistics.median(o.per_second / t.per_second for o, t in pairs):.2f}x"


def _report(
    collected: dict[tuple[str, str], list[WrkResult]],
    traces: dict[tuple[str, str], dict[str, Any]],
    ratios: dict[str, dict[str, float]],
) -> None:
    rows: list[tuple[str, ...]] = []
    for (shape, name), results in collected.items():
        against = {
            other: _median_ratio(results, collected[(shape, other)])
            for other in ("uncached", "mercurius")
            if (shape, other) in collected and other != name
        }
        rows.append(
            (
                shape,
                name,
                " / ".join(f"{r.per_second:,.0f}" for r in results),
                f"{statistics.median(r.p99_ms for r in results):.1f}",
                against.get("uncached", "-"),
                against.get("mercurius", "-"),
                str(sum(r.errors for r in results)),
            )
        )
    print_table(
        f"cache: wrk, 1 thread, {CONNECTIONS} connections, {ROUNDS} interleaved rounds of "
        f"{SECONDS} s; uncached / cached / cached-miss = proofgate serve on a SQLite file "
        "with PROOFGATE_CACHE off / on / on with 8 KiB (every page misses)",
        rows,
        ("shape", "server", "req/s per round", "p99 ms", "vs uncached", "vs mercurius", "errors"),
    )
    print_table(
        "cache: storage calls per request (X-Proofgate-Trace: 1, after the load: warm)",
        [
            (shape, name, str(trace.get("storageCalls", "?")), _call_summary(trace))
            for (shape, name), trace in traces.items()
        ],
        ("shape", "server", "calls", "which"),
    )
    print_table(
        "cache: hit ratio per access pattern over the run (/metrics)",
        [
            (name, pattern, f"{ratio:.1%}")
            for name, by_pattern in ratios.items()
            for pattern, ratio in sorted(by_pattern.items())
        ],
        ("server", "access pattern", "hit ratio"),
    )
    print("\n" + json.dumps({"cache_hit_ratios": ratios}))


def _bar(
    collected: dict[tuple[str, str], list[WrkResult]], traces: dict[tuple[str, str], dict[str, Any]]
) -> None:
    """The issue's bar, one row: the page of 50 served from the storage cache
    (every read a hit) against Mercurius's uncached page, the same rounds."""
    cached = collected.get((PAGE_SHAPE, "cached"))
    mercurius = collected.get((PAGE_SHAPE, "mercurius"))
    if not cached or not mercurius:
        print("\n## cache: the bar: skipped (no Mercurius: node or its packages are missing)")
        return

    def median(name: str) -> str:
        results = collected.get((PAGE_SHAPE, name))
        return "-" if not results else f"{statistics.median(r.per_second for r in results):,.0f}"

    ratio = statistics.median(
        c.per_second / m.per_second for c, m in zip(cached, mercurius, strict=True)
    )
    calls = traces.get((PAGE_SHAPE, "cached"), {}).get("storageCalls", "?")
    met = ratio >= 1.0 and calls == 0
    print_table(
        "cache: the bar (issue 33): the page of 50 from the storage cache (PROOFGATE_CACHE=on, "
        "every read a hit) >= 1.0x Fastify + Mercurius + graphql-jit's uncached page (aim 2x), "
        f"0 storage calls; median req/s of the same {ROUNDS} interleaved rounds",
        [
            (
                median("cached"),
                median("uncached"),
                median("mercurius"),
                median("bare"),
                f"{ratio:.2f}x",
                str(calls),
                "met" if met else "not met",
            )
        ],
        (
            "cached page",
            "uncached page",
            "mercurius page",
            "bare strawberry page",
            "cached vs mercurius",
            "storage calls",
            "bar",
        ),
    )
    print("\n" + json.dumps({"cache_bar": {"ratio": ratio, "storage_calls": calls, "met": met}}))
