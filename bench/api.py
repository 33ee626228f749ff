"""The gateway over HTTP against bare Strawberry serving the same shapes from
memory, and the storage calls each request makes against the minimum.

Three shapes: a page of 50 of a brand's products (a brand key),
``verifyProduct`` (anonymous, with a ScanInput; it reads, checks and records
a scan) and a small query (``viewer``, three fields, anonymous). The gateway
is ``proofgate serve`` on the embedded store (a SQLite file in a temporary
directory); the baseline is ``bench._bare``, Strawberry as its documentation
recommends serving it. Load comes from ``wrk`` (1 thread, 16 keep-alive
connections), never from a Python process on the same cores; rounds
alternate between the servers so background noise falls on both, and the
median of the per-round ratios is reported. Without ``wrk`` the section is
skipped with a message.

``verifyProduct`` is measured against ``bench._durable`` instead: the same
bare Strawberry doing the same durable work on stdlib ``sqlite3``, seeded
with the gateway's products and codes, since a write compared with a
constant measures nothing (issue 22). Beside the timed ratio, the section
counts a verification's instructions, relay work included
(``bench/_verify_instructions.py``), which the machine's load does not move.

A third server, Fastify + Mercurius with graphql-jit (``bench._mercurius``),
serves the page and the small query from memory with the bare baseline's
data: what a team would pick if it dropped Python. Its rounds interleave with
the other two, and ours / Mercurius is reported beside ours / bare (issue 23's
bars); without Node it is skipped with a message.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import uuid
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import _mercurius
from ._durable_seed import seed as seed_durable
from ._harness import print_table
from ._server import Server, free_port, post_json, serving
from ._wrk import WRK, Request, WrkResult, run_wrk

__all__ = ["run"]

CONNECTIONS = 16
ROUNDS = 3
SECONDS = 10
PRODUCTS = 500
"""Verifications rotate over these, so no one product's counter is the only hot key."""
ADMIN_KEY = "bench-admin-" + uuid.uuid4().hex
UNREACHABLE_RATE = str(10**9)
GATEWAY_ENV = {
    "PROOFGATE_ADMIN_KEY": ADMIN_KEY,
    # Thousands of anonymous verifications from one address: at the default
    # per-IP rate all but the first few would be refused. The limiters stay
    # on, so their cost is measured, at a rate the loader cannot reach.
    "PROOFGATE_RATE_LIMIT": UNREACHABLE_RATE,
    "PROOFGATE_RATE_BURST": UNREACHABLE_RATE,
    "PROOFGATE_KEY_RATE_LIMIT": UNREACHABLE_RATE,
    "PROOFGATE_KEY_RATE_BURST": UNREACHABLE_RATE,
}
WARMUP_SECONDS = 2
PAGE_SHAPE = "products page of 50"
VERIFY_SHAPE = "verifyProduct"
SMALL_SHAPE = "small query (viewer)"
SHAPES = (PAGE_SHAPE, VERIFY_SHAPE, SMALL_SHAPE)
BASELINES = {PAGE_SHAPE: "bare", VERIFY_SHAPE: "durable", SMALL_SHAPE: "bare"}
"""The Python server each shape is measured against."""
BARS = {PAGE_SHAPE: 2.0, VERIFY_SHAPE: 1.0, SMALL_SHAPE: 1.0}
"""Throughput ours / baseline each shape must reach (issues 9 and 22)."""
MERCURIUS_SHAPES = (PAGE_SHAPE, SMALL_SHAPE)
MERCURIUS_BARS = {PAGE_SHAPE: 0.30, SMALL_SHAPE: 0.35}
"""Throughput ours / Mercurius each shape must reach (issue 23)."""
TAIL = 2.0
"""Ours p99 / p50 under the steady load of wrk's connections, each shape."""

PAGE = """query Page($id: ID!) {
  brand(id: $id) {
    name
    products(first: 50) {
      edges { node { id name sku status brand { name } certificate { hash } } }
      pageInfo { hasNextPage }
    }
  }
}"""
SMALL = "{ viewer { role brandId __typename } }"
VERIFY = """mutation Verify($code: String!, $scan: ScanInput) {
  verifyProduct(code: $code, scan: $scan) {
    authentic result signatureValid chainIntact claimed isClaimant warnings scanCount
    product { id name status certificate { hash } brand { name } }
  }
}"""

REGISTER_BRAND = """mutation($domain: String!) {
  registerBrand(input: {name: "Bench", domain: $domain, plan: PRO}) { brand { id } apiKey }
}"""
GRANT = """mutation($brand: ID!, $key: String!) {
  grantCredits(brandId: $brand, amount: "100000", idempotencyKey: $key) { id }
}"""
REGISTER_PRODUCTS = """mutation($inputs: [RegisterProductInput!]!) {
  registerProducts(inputs: $inputs) { id verificationCode }
}"""
ADD_EVENT = """mutation($id: ID!) {
  addProvenanceEvent(productId: $id, input: {type: SHIPPED, location: "Rotterdam"}) { sequence }
}"""


@dataclass(frozen=True)
class Minimum:
    calls: int
    reasoning: str
    outside_trace: str


MINIMUMS = {
    PAGE_SHAPE: Minimum(
        2,
        "AP01 GetItem (the brand) + AP07 Query (51 items in one page, the 51st for "
        "hasNextPage); every product's brand{name} is the same AP01 key, and the index "
        "projects whole products, so no AP04",
        "+1 AP20 GetItem per request to resolve the Bearer key (before the trace opens)",
    ),
    VERIFY_SHAPE: Minimum(
        4,
        "AP05 GetItem (code -> product id) + AP33 Query (the product's item collection "
        "CLAIM..META: claim, whole chain, product; one page) + 1 TransactWriteItems (scan, "
        "counter ADDs, outbox item) + AP01 GetItem (product.brand{name}); AP33 needs the "
        "product id, so 3 round trips at best: AP05, then AP33, then the write with AP01",
        "+1 AP20 GetItem for the key the trace needs (the measured load is anonymous)",
    ),
}


@dataclass
class Fixture:
    brand_id: str
    brand_key: str
    codes: list[str]


def _gql(
    server: Server,
    query: str,
    variables: dict[str, Any],
    key: str | None = None,
    timeout: float = 30,
) -> Any:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return post_json(server, {"query": query, "variables": variables}, headers, timeout)["data"]


EVENTS = 1
"""Provenance events per product, in both stores."""


def _seed(server: Server, count: int = PRODUCTS, batch: int = 100) -> Fixture:
    """One brand, its products with ``EVENTS`` provenance events each, through
    the API, ``batch`` products per registerProducts."""
    data = _gql(server, REGISTER_BRAND, {"domain": f"{uuid.uuid4().hex[:12]}.example"}, ADMIN_KEY)
    brand_id, key = data["registerBrand"]["brand"]["id"], data["registerBrand"]["apiKey"]
    _gql(server, GRANT, {"brand": brand_id, "key": uuid.uuid4().hex}, ADMIN_KEY)
    codes: list[str] = []
    for start in range(0, count, batch):
        inputs = [
            {"brandId": brand_id, "name": f"Product {i}", "sku": f"SKU-{i:05d}"}
            for i in range(start, min(count, start + batch))
        ]
        # moto, on a busy machine, may take longer than a gateway should.
        registered = _gql(server, REGISTER_PRODUCTS, {"inputs": inputs}, key, timeout=300)
        for product in registered["registerProducts"]:
            for _ in range(EVENTS):
                _gql(server, ADD_EVENT, {"id": product["id"]}, key, timeout=300)
            codes.append(product["verificationCode"])
    return Fixture(brand_id, key, codes)


def _requests(operation: str, fixture: Fixture) -> list[Request]:
    if operation == PAGE_SHAPE:
        body = {"query": PAGE, "variables": {"id": fixture.brand_id}}
        return [Request(json.dumps(body), {"Authorization": f"Bearer {fixture.brand_key}"})]
    if operation == SMALL_SHAPE:
        return [Request(json.dumps({"query": SMALL}), {})]
    return [
        Request(
            json.dumps(
                {
                    "query": VERIFY,
                    "variables": {
                        "code": code,
                        "scan": {
                            "country": "FR",
                            "city": "Paris",
                            "deviceFingerprint": f"device-{i % 97}",
                            "userAgent": "proofgate-bench/1.0",
                        },
                    },
                }
            ),
            {},
        )
        for i, code in enumerate(fixture.codes)
    ]


def _trace(server: Server, operation: str, fixture: Fixture) -> dict[str, Any]:
    # The trace answers callers with a key only; the key's own read (AP20)
    # happens before the trace opens.
    headers = {"X-Proofgate-Trace": "1", "Authorization": f"Bearer {fixture.brand_key}"}
    body: dict[str, Any]
    if operation == PAGE_SHAPE:
        body = {"query": PAGE, "variables": {"id": fixture.brand_id}}
    else:
        body = {
            "query": VERIFY,
            "variables": {"code": fixture.codes[-1], "scan": {"country": "DE"}},
        }
    extensions = post_json(server, body, headers).get("extensions")
    trace: dict[str, Any] = extensions["trace"] if isinstance(extensions, dict) else {}
    return trace


def _call_summary(trace: dict[str, Any]) -> str:
    counts: dict[str, int] = {}
    for call in trace.get("calls", []):
        label = f"{call['accessPattern'] or '-'} {call['operation']}"
        counts[label] = counts.get(label, 0) + 1
    return ", ".join(f"{n}x {label}" if n > 1 else label for label, n in counts.items())


def _serves(server: Server, operation: str) -> bool:
    if server.name == "mercurius":
        return operation in MERCURIUS_SHAPES
    return server.name == "ours" or BASELINES[operation] == server.name


def _check_answers(servers: tuple[Server, ...], fixture: Fixture) -> None:
    """Every shape answers without errors on every server before load: a
    benchmark of error responses measures nothing."""
    for server in servers:
        for operation in filter(lambda o: _serves(server, o), SHAPES):
            request = _requests(operation, fixture)[0]
            post_json(server, json.loads(request.body), request.headers)


Collected = dict[tuple[str, str], list[WrkResult]]


async def _load(servers: tuple[Server, ...], fixture: Fixture) -> Collected:
    collected: dict[tuple[str, str], list[WrkResult]] = {}
    for round_index in range(ROUNDS):
        for operation in SHAPES:
            requests = _requests(operation, fixture)
            order = servers if round_index % 2 == 0 else servers[::-1]
            for server in filter(lambda s: _serves(s, operation), order):
                port = server.port
                await run_wrk(port, requests, seconds=WARMUP_SECONDS, connections=CONNECTIONS)
                result = await run_wrk(port, requests, seconds=SECONDS, connections=CONNECTIONS)
                collected.setdefault((operation, server.name), []).append(result)
    return collected


async def run() -> None:
    from . import _verify_instructions  # it imports VERIFY from here

    await _verify_instructions.run()  # instructions, which the load does not move
    if WRK is None:
        print(
            "\n## api: skipped: wrk is not installed (Debian: apt-get install wrk; "
            ".ci/run installs it when run as root)"
        )
        return
    node_missing = _mercurius.unavailable()
    if node_missing is not None:
        print(f"\n## api: the Mercurius baseline is skipped: {node_missing}")
    with tempfile.TemporaryDirectory() as directory, ExitStack() as stack:
        data_dir = Path(directory)
        ours_port, bare_port = free_port(), free_port()
        ours_command = [
            sys.executable, "-m", "api.cli.main", "serve",
            "--host", "127.0.0.1", "--port", str(ours_port), "--data-dir", str(data_dir / "data"),
        ]  # fmt: skip
        bare_command = [sys.executable, "-m", "bench._bare", "--port", str(bare_port)]
        ours = stack.enter_context(
            serving(
                "ours",
                ours_command,
                port=ours_port,
                probe="/health",
                log_dir=data_dir,
                env=GATEWAY_ENV,
            )
        )
        bare = stack.enter_context(_baseline("bare", bare_command, bare_port, data_dir))
        servers: tuple[Server, ...] = (ours, bare)
        if node_missing is None:
            port = free_port()
            mercurius = _baseline("mercurius", _mercurius.command(port), port, data_dir)
            servers += (stack.enter_context(mercurius),)
        fixture = _seed(ours)
        durable_db, durable_port = str(data_dir / "durable.sqlite"), free_port()
        seed_durable(durable_db, fixture.codes, events=EVENTS)
        durable_command = [sys.executable, "-m", "bench._durable", "--db", durable_db]
        durable_command += ["--port", str(durable_port)]
        servers += (stack.enter_context(_durable(durable_command, durable_port, data_dir)),)
        _check_answers(servers, fixture)
        traces = {operation: _trace(ours, operation, fixture) for operation in MINIMUMS}
        collected = await _load(servers, fixture)
    _report(collected, traces)


def _baseline(
    name: str, command: list[str], port: int, log_dir: Path
) -> AbstractContextManager[Server]:
    probe = "/graphql?query=%7B__typename%7D"
    return serving(name, command, port=port, probe=probe, log_dir=log_dir)


def _durable(command: list[str], port: int, log_dir: Path) -> AbstractContextManager[Server]:
    probe = "/graphql?query=%7Bhealth%7D"
    return serving("durable", command, port=port, probe=probe, log_dir=log_dir)


@dataclass(frozen=True)
class Summary:
    ratio: float
    """Median over the rounds of ours / baseline (``BASELINES``) throughput."""
    ours_p99: float
    baseline_p99: float
    ours_tail: float
    """Median over the rounds of ours p99 / p50 (docs/design.md, Performance budgets: <= 2)."""
    mercurius: float | None = None
    """Median over the rounds of ours / Mercurius throughput; None without Node."""
    mercurius_p99: float | None = None


def _median_ratio(ours: list[WrkResult], other: list[WrkResult]) -> float:
    """Rounds pair up in order: each ratio is of two runs measured minutes apart at most."""
    return statistics.median(o.per_second / t.per_second for o, t in zip(ours, other, strict=True))


def _summaries(collected: dict[tuple[str, str], list[WrkResult]]) -> dict[str, Summary]:
    summaries = {}
    for operation in SHAPES:
        ours, bare = collected[(operation, "ours")], collected[(operation, BASELINES[operation])]
        node = collected.get((operation, "mercurius"))
        summaries[operation] = Summary(
            _median_ratio(ours, bare),
            statistics.median(r.p99_ms for r in ours),
            statistics.median(r.p99_ms for r in bare),
            statistics.median(r.p99_ms / r.p50_ms for r in ours),
            _median_ratio(ours, node) if node else None,
            statistics.median(r.p99_ms for r in node) if node else None,
        )
    return summaries


def _report(
    collected: dict[tuple[str, str], list[WrkResult]], traces: dict[str, dict[str, Any]]
) -> None:
    rows: list[tuple[str, ...]] = [
        (
            operation,
            server,
            " / ".join(f"{r.per_second:,.0f}" for r in results),
            " / ".join(f"{r.p50_ms:.1f}" for r in results),
            " / ".join(f"{r.p99_ms:.1f}" for r in results),
            str(sum(r.errors for r in results)),
        )
        for (operation, server), results in collected.items()
    ]
    print_table(
        f"api: wrk, 1 thread, {CONNECTIONS} keep-alive connections, {ROUNDS} interleaved "
        f"rounds of {SECONDS} s per side; ours = proofgate serve on a SQLite file, bare = "
        "Strawberry from memory (ParserCache, ValidationCache, DataLoader, gc.freeze, uvloop, "
        "httptools), mercurius = Fastify + Mercurius + graphql-jit from memory (Node), durable = "
        "bare Strawberry doing verifyProduct's durable work on stdlib sqlite3 (bench/_durable.py)",
        rows,
        ("operation", "server", "req/s per round", "p50 ms", "p99 ms", "errors"),
    )
    summaries = _summaries(collected)
    print_table(
        "api: ours / baseline (bare, or durable for verifyProduct) and ours / Mercurius, "
        "medians of the per-round ratios",
        [
            (
                operation,
                BASELINES[operation],
                f"{summary.ratio:.2f}x",
                f">= {BARS[operation]:.1f}x",
                "-" if summary.mercurius is None else f"{summary.mercurius:.2f}x",
                f">= {MERCURIUS_BARS[operation]:.2f}x" if operation in MERCURIUS_BARS else "-",
                f"{summary.ours_p99:.1f}",
                f"{summary.baseline_p99:.1f}",
                "-" if summary.mercurius_p99 is None else f"{summary.mercurius_p99:.1f}",
            )
            for operation, summary in summaries.items()
        ],
        (
            "operation",
            "baseline",
            "ours/baseline",
            "bar",
            "ours/mercurius",
            "bar",
            "p99 ms ours",
            "p99 ms baseline",
            "p99 ms mercurius",
        ),
    )
    _report_calls(traces)
    _verdicts(summaries, traces)


def _report_calls(traces: dict[str, dict[str, Any]]) -> None:
    trace_rows: list[tuple[str, ...]] = []
    for operation, trace in traces.items():
        minimum = MINIMUMS[operation]
        own = _own_calls(trace)
        trace_rows.append(
            (
                operation,
                str(trace.get("storageCalls", "?")),
                str(own),
                str(minimum.calls),
                "yes" if own <= minimum.calls else "NO",
                _call_summary(trace),
                str(trace.get("execution", "?")),
            )
        )
    print_table(
        "api: storage calls per request (X-Proofgate-Trace: 1) against the minimum",
        trace_rows,
        ("operation", "traced", "request's own", "minimum", "at minimum", "calls", "execution"),
    )
    for operation, minimum in MINIMUMS.items():
        print(f"\n- {operation}: minimum {minimum.calls} = {minimum.reasoning}.")
        print(f"  Outside the trace: {minimum.outside_trace}.")


def _background(call: dict[str, Any]) -> bool:
    return call.get("accessPattern") is None and call.get("operation") != "TransactWriteItems"


def _own_calls(trace: dict[str, Any]) -> int:
    return sum(not _background(c) for c in trace.get("calls", []))


def _verdicts(summaries: dict[str, Summary], traces: dict[str, dict[str, Any]]) -> None:
    """docs/design.md, Performance budgets, checked against this run."""
    checks = [
        *(
            (
                f"throughput {name} >= {bar:.1f}x {BASELINES[name]}",
                s.ratio >= bar,
                f"{s.ratio:.2f}x",
            )
            for name, s in summaries.items()
            for bar in (BARS[name],)
        ),
        *(
            (
                f"throughput {name} >= {bar:.2f}x Mercurius",
                s.mercurius >= bar,
                f"{s.mercurius:.2f}x",
            )
            for name, s in summaries.items()
            for bar in (MERCURIUS_BARS.get(name),)
            if bar is not None and s.mercurius is not None
        ),
        *(
            (
                f"{name}: p99 <= {BASELINES[name]}'s p99",
                s.ours_p99 <= s.baseline_p99,
                f"{s.ours_p99:.1f} ms vs {s.baseline_p99:.1f} ms",
            )
            for name, s in summaries.items()
        ),
        *(
            (f"tail {name}: p99 / p50 <= {TAIL:.0f}", s.ours_tail <= TAIL, f"{s.ours_tail:.2f}")
            for name, s in summaries.items()
        ),
        *(
            (
                f"storage calls at the minimum ({operation})",
                _own_calls(traces[operation]) <= MINIMUMS[operation].calls,
                f"{_own_calls(traces[operation])} on the request's path, "
                f"minimum {MINIMUMS[operation].calls}",
            )
            for operation in MINIMUMS
        ),
    ]
    print("\nBudgets (docs/design.md, Performance budgets):")
    for name, ok, value in checks:
        print(f"  {'ok  ' if ok else 'MISS'} {name}: {value}")
