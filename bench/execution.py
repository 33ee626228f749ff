"""In-process: the page of 50 through compiled plans and through graphql-core.

One gateway on a SQLite file, as served, two schemas that differ only in
``PROOFGATE_EXECUTION``; each runs the page query with a fresh context (and
so fresh DataLoaders) per execution, as a request would, without HTTP. Two
measures: the whole ``schema.execute`` (parse and validation caches, every
extension, then execution) and the execution phase alone (graphql-core's
``execute`` of the parsed document with the schema's executor class), which
is where a plan differs from graphql-core; both include the resolvers and
their storage reads.
"""

from __future__ import annotations

import gc
import secrets
import statistics
import tempfile
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import strawberry
from graphql import DocumentNode, experimental_execute_incrementally, parse
from strawberry.execution.is_awaitable import optimized_is_awaitable

from api.app import create_app
from api.graphql.schema import build_schema
from api.settings.gateway import Settings
from api.settings.limits import Execution, Limits
from resolvers.context import RequestContext
from resolvers.loaders import Loaders
from services.auth import Principal, authenticate
from services.context import Services

from ._harness import Result, measure_async, print_table
from ._instructions import print_instructions

__all__ = ["PAGE", "execute_page", "run", "seeded"]

ADMIN_KEY = "bench-admin-" + uuid.uuid4().hex
COUNT = 600
PAGE = """query Page($id: ID!) {
  brand(id: $id) {
    name
    products(first: 50) {
      edges { node { id name sku status brand { name } certificate { hash } } }
      pageInfo { hasNextPage }
    }
  }
}"""


async def _seed(http: httpx.AsyncClient) -> tuple[str, str]:
    async def gql(query: str, variables: dict[str, Any], key: str) -> Any:
        headers = {"Authorization": f"Bearer {key}"}
        body = {"query": query, "variables": variables}
        response = await http.post("/graphql", json=body, headers=headers)
        return response.json()["data"]

    data = await gql(
        'mutation($d: String!) { registerBrand(input: {name: "Bench", domain: $d, plan: PRO})'
        " { brand { id } apiKey } }",
        {"d": f"{uuid.uuid4().hex[:12]}.example"},
        ADMIN_KEY,
    )
    brand, key = data["registerBrand"]["brand"]["id"], data["registerBrand"]["apiKey"]
    await gql(
        'mutation($b: ID!, $k: String!) { grantCredits(brandId: $b, amount: "1000",'
        " idempotencyKey: $k) { id } }",
        {"b": brand, "k": uuid.uuid4().hex},
        ADMIN_KEY,
    )
    inputs = [{"brandId": brand, "name": f"Product {i}", "sku": f"SKU-{i:05d}"} for i in range(60)]
    await gql(
        "mutation($i: [RegisterProductInput!]!) { registerProducts(inputs: $i) { id } }",
        {"i": inputs},
        key,
    )
    return brand, key


def _context(services: Services, principal: Principal) -> RequestContext:
    return RequestContext(
        services=services,
        principal=principal,
        loaders=Loaders(services.storage, principal.tenant),
        request_id=secrets.token_hex(8),
    )


async def _measure(
    name: str, schema: strawberry.Schema, services: Services, principal: Principal, brand: str
) -> Result:
    async def once(_: int) -> None:
        context = _context(services, principal)
        result = await schema.execute(PAGE, {"id": brand}, context_value=context)
        assert not result.errors, result.errors

    return await measure_async(name, once, COUNT)


async def execute_page(
    schema: strawberry.Schema,
    document: DocumentNode,
    services: Services,
    principal: Principal,
    brand: str,
) -> None:
    """The execution phase alone: graphql-core's execution of the parsed page
    with the schema's executor class (the incremental entry point, as the
    schema declares @defer and @stream)."""
    result: Any = experimental_execute_incrementally(
        schema.graphql_schema,
        document,
        context_value=_context(services, principal),
        variable_values={"id": brand},
        is_awaitable=optimized_is_awaitable,
        executor_class=schema.execution_context_class,
    )
    if optimized_is_awaitable(result):
        result = await result
    assert not result.errors, result.errors


async def _measure_execution(
    name: str, schema: strawberry.Schema, services: Services, principal: Principal, brand: str
) -> Result:
    document = parse(PAGE)

    async def once(_: int) -> None:
        await execute_page(schema, document, services, principal, brand)

    return await measure_async(name, once, COUNT)


ROUNDS = 5


async def _rounds(
    measure: Any, schemas: dict[str, strawberry.Schema], *args: Any
) -> dict[str, list[Result]]:
    """Interleaved rounds, each side's results in round order."""
    results: dict[str, list[Result]] = {name: [] for name in schemas}
    for _ in range(ROUNDS):
        for name, schema in schemas.items():
            results[name].append(await measure(name, schema, *args))
    return results


def _rows(results: dict[str, list[Result]]) -> list[tuple[str, ...]]:
    """Each side's median round, and the median of the per-round ratios: a
    burst of noise on the machine falls on one round, not on the verdict."""
    rows: list[tuple[str, ...]] = []
    for name, rounds in results.items():
        middle = sorted(rounds, key=lambda r: r.ops_per_second)[len(rounds) // 2]
        per_round = " / ".join(f"{r.ops_per_second:,.0f}" for r in rounds)
        rows.append((name, per_round, f"{middle.p50_us / 1000:.2f}", f"{middle.p99_us / 1000:.2f}"))
    ratios = [
        compiled.ops_per_second / core.ops_per_second
        for compiled, core in zip(results["compiled"], results["graphql-core"], strict=True)
    ]
    rows.append(("compiled / graphql-core", f"{statistics.median(ratios):.2f}x", "", ""))
    return rows


@asynccontextmanager
async def seeded() -> AsyncIterator[tuple[dict[str, strawberry.Schema], tuple[Any, ...]]]:
    """A gateway with a brand of 60 products, the two schemas, and the
    arguments every measure takes (services, principal, brand).

    The store is a SQLite file, as the served gateway's is, not ``:memory:``:
    a file is read on the event loop's thread, where ``:memory:`` hands every
    read to the writer's thread and waits, a wait both executors would share
    and the served gateway never has."""
    with tempfile.TemporaryDirectory(prefix="proofgate-bench-") as directory:
        path = str(Path(directory) / "bench.db")
        settings = Settings(cursor_key=bytes(range(32)), admin_key=ADMIN_KEY, sqlite_path=path)
        async with _gateway(settings) as (services, brand, principal):
            limits = Limits(rate_limit=None, key_rate_limit=None)
            schemas: dict[str, strawberry.Schema] = {
                "compiled": build_schema(limits),
                "graphql-core": build_schema(replace(limits, execution=Execution.GRAPHQL_CORE)),
            }
            # As the served gateway and the bare baseline do after start-up
            # (docs/design.md, Performance budgets): the seeded heap out of the
            # collector's way, so a full collection lands on neither side's rounds.
            gc.collect()
            gc.freeze()
            yield schemas, (services, principal, brand)


@asynccontextmanager
async def _gateway(settings: Settings) -> AsyncIterator[tuple[Services, str, Principal]]:
    """The gateway started and seeded: its services, the brand, and the brand's principal."""
    app = create_app(settings)
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://bench") as http,
    ):
        brand, key = await _seed(http)
        services = app.state.graphql.services
        principal = await authenticate(services.storage, f"Bearer {key}", services.admin_key_hash)
        yield services, brand, principal


async def run() -> None:
    async with seeded() as (schemas, arguments):
        whole = await _rounds(_measure, schemas, *arguments)
        execution = await _rounds(_measure_execution, schemas, *arguments)
    header = ("executor", "ops/s per round", "p50 ms (median round)", "p99 ms")
    print_table(
        "execution: the page of 50 in-process, whole schema.execute (caches, extensions, "
        f"execution; fresh DataLoaders), {ROUNDS} interleaved rounds, median ratio",
        _rows(whole),
        header,
    )
    print_table(
        "execution: the page of 50 in-process, the execution phase alone (graphql-core's "
        f"execute with the schema's executor class), {ROUNDS} interleaved rounds, median "
        "ratio (bar: >= 3x)",
        _rows(execution),
        header,
    )
    await print_instructions()
