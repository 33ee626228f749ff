"""The gateway over HTTP against bare Strawberry serving the same shapes from
memory, and the storage calls each request makes against the minimum.

Two operations: ``verifyProduct`` (anonymous, with a ScanInput; it reads,
checks and records a scan) and a page of 50 of a brand's products (a brand
key). Both servers run side by side in one run with the same uvicorn settings
(uvloop, httptools, one worker, 127.0.0.1): the gateway is ``proofgate serve``
on the embedded store (a SQLite file in a temporary directory), the baseline is
``bench._bare``. A loader process (``bench._load``) holds a fixed number of
keep-alive connections; rounds alternate between the servers so background
noise falls on both.

Every ratio is ours / bare. The budgets (docs/design.md, Performance budgets)
ask a query shape to at least match bare Strawberry's throughput, and p99 / p50
<= 3 under steady load. The throughput budget binds the query shape; a
mutation that reads, verifies a signature and writes a transaction is measured
against a resolver returning a constant for orientation.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._harness import print_table
from ._load import LoadPlan, LoadResult, encode_post
from ._server import Server, free_port, post_json, run_load, serving

__all__ = ["run"]

CONNECTIONS = 16
ROUNDS = 4
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
WARMUP = 100
"""Requests per round before the window opens, on the same connections."""
LOADS = {
    # (measured requests per round, seconds per round at most)
    "products page of 50": (750, 2.0),
    "verifyProduct": (1000, 2.0),
}

PAGE = """query Page($id: ID!) {
  brand(id: $id) {
    name
    products(first: 50) {
      edges { node { id name status certificate { hash } brand { name } } }
      pageInfo { hasNextPage endCursor }
    }
  }
}"""
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
    "products page of 50": Minimum(
        2,
        "AP01 GetItem (the brand) + AP07 Query (51 items in one page, the 51st for "
        "hasNextPage); every product's brand{name} is the same AP01 key, and the index "
        "projects whole products, so no AP04",
        "+1 AP20 GetItem per request to resolve the Bearer key (before the trace opens)",
    ),
    "verifyProduct": Minimum(
        6,
        "AP05 GetItem (code -> product id) + AP04 GetItem (product) + AP09 Query (the "
        "whole chain, one page) + AP11 GetItem (claim) + 1 TransactWriteItems (scan, two "
        "counter ADDs, outbox item) + AP01 GetItem (product.brand{name}); AP04/AP09/AP11 "
        "all need the product id, so 3 round trips at best: AP05, then AP04|AP09|AP11, "
        "then the write with AP01",
        "none (anonymous)",
    ),
}


@dataclass
class Fixture:
    brand_id: str
    brand_key: str
    codes: list[str]


def _gql(server: Server, query: str, variables: dict[str, Any], key: str | None = None) -> Any:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return post_json(server, {"query": query, "variables": variables}, headers)["data"]


def _seed(server: Server) -> Fixture:
    """One brand, its products with one provenance event each, through the API."""
    data = _gql(server, REGISTER_BRAND, {"domain": f"{uuid.uuid4().hex[:12]}.example"}, ADMIN_KEY)
    brand_id, key = data["registerBrand"]["brand"]["id"], data["registerBrand"]["apiKey"]
    _gql(server, GRANT, {"brand": brand_id, "key": uuid.uuid4().hex}, ADMIN_KEY)
    codes: list[str] = []
    for start in range(0, PRODUCTS, 100):
        inputs = [
            {"brandId": brand_id, "name": f"Product {i}", "sku": f"SKU-{i:05d}"}
            for i in range(start, min(PRODUCTS, start + 100))
        ]
        products = _gql(server, REGISTER_PRODUCTS, {"inputs": inputs}, key)["registerProducts"]
        for product in products:
            _gql(server, ADD_EVENT, {"id": product["id"]}, key)
            codes.append(product["verificationCode"])
    return Fixture(brand_id, key, codes)


def _requests(operation: str, fixture: Fixture) -> list[str]:
    if operation == "products page of 50":
        body = {"query": PAGE, "variables": {"id": fixture.brand_id}}
        return [encode_post("/graphql", body, {"Authorization": f"Bearer {fixture.brand_key}"})]
    return [
        encode_post(
            "/graphql",
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
            },
        )
        for i, code in enumerate(fixture.codes)
    ]


def _merge(results: list[LoadResult]) -> LoadResult:
    merged = LoadResult()
    for result in results:
        merged.requests += result.requests
        merged.elapsed += result.elapsed
        merged.errors += result.errors
        merged.first_error = merged.first_error or result.first_error
        merged.latencies.extend(result.latencies)
    merged.latencies.sort()
    return merged


@dataclass(frozen=True)
class Measured:
    requests: int
    per_second: float
    p50_ms: float
    p99_ms: float
    errors: int

    @classmethod
    def of(cls, result: LoadResult) -> Measured:
        samples = sorted(result.latencies)
        p99 = samples[min(len(samples) - 1, int(len(samples) * 0.99))]
        return cls(
            result.requests,
            result.requests / result.elapsed,
            statistics.median(samples) * 1e3,
            p99 * 1e3,
            result.errors,
        )

    @property
    def tail(self) -> float:
        return self.p99_ms / self.p50_ms


def _gateway_freezes_gc() -> bool:
    """The baseline gets the gateway's start-up hygiene, whatever it is, so
    the ratio measures the request path and not a gc setting."""
    api = Path(__file__).resolve().parents[1] / "proofgate" / "api"
    return any("gc.freeze()" in path.read_text() for path in api.glob("*.py"))


def _trace(server: Server, operation: str, fixture: Fixture) -> dict[str, Any]:
    headers = {"X-Proofgate-Trace": "1"}
    body: dict[str, Any]
    if operation == "products page of 50":
        headers["Authorization"] = f"Bearer {fixture.brand_key}"
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


async def run() -> None:
    freeze = _gateway_freezes_gc()
    with tempfile.TemporaryDirectory() as directory:
        data_dir = Path(directory)
        ours_port, bare_port = free_port(), free_port()
        ours_command = [
            sys.executable, "-m", "api.cli", "serve",
            "--host", "127.0.0.1", "--port", str(ours_port), "--data-dir", str(data_dir / "data"),
        ]  # fmt: skip
        bare_command = [sys.executable, "-m", "bench._bare", "--port", str(bare_port)]
        if freeze:
            bare_command.append("--freeze-gc")
        with (
            serving(
                "ours",
                ours_command,
                port=ours_port,
                probe="/health",
                log_dir=data_dir,
                env=GATEWAY_ENV,
            ) as ours,
            serving(
                "bare",
                bare_command,
                port=bare_port,
                probe="/graphql?query=%7B__typename%7D",
                log_dir=data_dir,
            ) as bare,
        ):
            fixture = _seed(ours)
            traces = {operation: _trace(ours, operation, fixture) for operation in LOADS}
            collected: dict[tuple[str, str], list[LoadResult]] = {}
            for _ in range(ROUNDS):
                for operation, (count, seconds) in LOADS.items():
                    requests = _requests(operation, fixture)
                    for server in (ours, bare):
                        plan = LoadPlan(
                            port=server.port,
                            requests=requests,
                            connections=CONNECTIONS,
                            count=count,
                            seconds=seconds,
                            warmup=WARMUP,
                        )
                        result = await run_load(plan)
                        collected.setdefault((operation, server.name), []).append(result)
    measured = {key: Measured.of(_merge(results)) for key, results in collected.items()}
    _report(measured, traces, freeze, collected)


def _report(
    measured: dict[tuple[str, str], Measured],
    traces: dict[str, dict[str, Any]],
    freeze: bool,
    collected: dict[tuple[str, str], list[LoadResult]],
) -> None:
    rows: list[tuple[str, ...]] = [
        (
            operation,
            server,
            f"{m.requests:,}",
            f"{m.per_second:,.0f}",
            f"{m.p50_ms:.2f}",
            f"{m.p99_ms:.2f}",
            f"{m.tail:.2f}",
            str(m.errors),
        )
        for (operation, server), m in measured.items()
    ]
    print_table(
        f"api: over HTTP, {CONNECTIONS} keep-alive connections, {ROUNDS} alternating rounds, "
        f"uvicorn (uvloop, httptools, 1 worker), gc.freeze {'on' if freeze else 'off'}; "
        "ours = proofgate serve on a SQLite file, bare = Strawberry from memory",
        rows,
        ("operation", "server", "requests", "req/s", "p50 ms", "p99 ms", "p99/p50", "errors"),
    )
    ratios: list[tuple[str, ...]] = []
    for operation in LOADS:
        ours, bare = measured[(operation, "ours")], measured[(operation, "bare")]
        ratios.append(
            (
                operation,
                f"{ours.per_second / bare.per_second:.2f}",
                f"{ours.p99_ms / bare.p99_ms:.2f}",
                f"{ours.tail:.2f}",
                f"{bare.tail:.2f}",
            )
        )
    print_table(
        "api: ours / bare (budget: throughput >= 1.00 on a query shape; p99/p50 <= 3)",
        ratios,
        ("operation", "throughput ours/bare", "p99 ours/bare", "p99/p50 ours", "p99/p50 bare"),
    )
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
                f"{trace.get('capacityUnits', 0):g}",
            )
        )
    print_table(
        "api: storage calls per request (X-Proofgate-Trace: 1) against the minimum",
        trace_rows,
        (
            "operation",
            "traced",
            "request's own",
            "minimum",
            "at minimum",
            "calls traced",
            "capacity units",
        ),
    )
    for operation, minimum in MINIMUMS.items():
        print(f"\n- {operation}: minimum {minimum.calls} = {minimum.reasoning}.")
        print(f"  Outside the trace: {minimum.outside_trace}.")
        stray = [c for c in traces[operation].get("calls", []) if _background(c)]
        if stray:
            print(
                f"  {len(stray)} traced call(s) with no AP besides the transaction "
                f"({', '.join(c['operation'] for c in stray)}): work the request spawned "
                "(the relay's outbox claim runs in a task created inside the request, so it "
                "inherits the trace context); not on the request's path."
            )
    _verdicts(measured, traces)
    for (operation, server), results in collected.items():
        for result in results:
            if result.first_error:
                print(f"\n{server} {operation}: first error: {result.first_error}")
                break


def _background(call: dict[str, Any]) -> bool:
    return call.get("accessPattern") is None and call.get("operation") != "TransactWriteItems"


def _own_calls(trace: dict[str, Any]) -> int:
    return sum(not _background(c) for c in trace.get("calls", []))


def _verdicts(measured: dict[tuple[str, str], Measured], traces: dict[str, dict[str, Any]]) -> None:
    """docs/design.md, Performance budgets, checked against this run."""
    page = "products page of 50"
    checks = [
        (
            "query shape throughput >= bare Strawberry",
            measured[(page, "ours")].per_second >= measured[(page, "bare")].per_second,
            f"{measured[(page, 'ours')].per_second / measured[(page, 'bare')].per_second:.2f}x",
        ),
        *(
            (
                f"p99/p50 <= 3 ({operation})",
                measured[(operation, "ours")].tail <= 3,
                f"{measured[(operation, 'ours')].tail:.2f}",
            )
            for operation in LOADS
        ),
        *(
            (
                f"storage calls at the minimum ({operation})",
                _own_calls(traces[operation]) <= MINIMUMS[operation].calls,
                f"{_own_calls(traces[operation])} on the request's path, "
                f"minimum {MINIMUMS[operation].calls}",
            )
            for operation in LOADS
        ),
    ]
    print("\nBudgets (docs/design.md, Performance budgets):")
    for name, ok, value in checks:
        print(f"  {'ok  ' if ok else 'MISS'} {name}: {value}")
