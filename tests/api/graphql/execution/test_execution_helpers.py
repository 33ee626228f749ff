"""An execution leaves nothing for the cycle collector, and the resolvers'
``info.async_helpers`` still gather and track work, during the execution and
after it (docs/design.md, Compiled execution)."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from typing import Any

import pytest
import strawberry
from _operation_context import Context as OperationContext
from graphql import Executor, parse
from starlette.requests import Request
from strawberry.dataloader import DataLoader
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext

from api._strawberry import graphql_schema_of
from api.graphql.execution import PlanCache, compiled_executor
from api.graphql.execution.async_helpers import weak_helpers
from resolvers.context import RequestContext
from resolvers.loaders import Loaders

QUERY = "{ items { name brand { name } pair settled } }"


class Context(OperationContext):
    """What a request's context holds: a loader, a cache of what it read."""

    def __init__(self) -> None:
        super().__init__()
        self.brands: DataLoader[str, Brand] = DataLoader(_load_brands)
        self.settled: list[str] = []


async def _load_brands(keys: list[str]) -> list[Brand]:
    return [Brand(name=key) for key in keys]


@strawberry.type
class Brand:
    name: str


@strawberry.type
class Item:
    name: str

    @strawberry.field
    async def brand(self, info: strawberry.Info) -> Brand:
        brand: Brand = await info.context.brands.load("brand of " + self.name)
        return brand

    @strawberry.field
    async def pair(self, info: strawberry.Info) -> list[str]:
        helpers = info._raw_info.async_helpers
        result: list[str] = await helpers.gather([_echo(self.name), _echo("twice")])
        return result

    @strawberry.field
    def settled(self, info: strawberry.Info) -> bool:
        info._raw_info.async_helpers.track([_record(info.context.settled, self.name)])
        return True


async def _echo(value: str) -> str:
    await asyncio.sleep(0)
    return value


async def _record(into: list[str], value: str) -> None:
    await asyncio.sleep(0)
    into.append(value)


@strawberry.type
class Query:
    @strawberry.field
    def items(self) -> list[Item]:
        return [Item(name=f"item {index}") for index in range(3)]


def _schema(executor: type[Any]) -> strawberry.Schema:
    return strawberry.Schema(query=Query, execution_context_class=executor)


SCHEMAS = {
    "compiled": lambda: _schema(compiled_executor(PlanCache())),
    "graphql-core": lambda: _schema(compiled_executor(None)),
}


@pytest.fixture
def collector_off() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _cyclic_garbage() -> list[Any]:
    """What only the cycle collector would have freed since the last collection."""
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        garbage = list(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    return garbage


async def _execute(schema: strawberry.Schema, context: Context) -> Any:
    result = await schema.execute(QUERY, context_value=context)
    assert result.errors is None, result.errors
    return result.data


@pytest.mark.parametrize("mode", SCHEMAS)
async def test_an_execution_leaves_no_cyclic_garbage(mode: str, collector_off: None) -> None:
    schema = SCHEMAS[mode]()
    await _execute(schema, Context())  # plans compiled, caches filled
    _cyclic_garbage()

    data = await _execute(schema, Context())

    assert data["items"][0]["brand"] == {"name": "brand of item 0"}
    left = [o for o in _cyclic_garbage() if isinstance(o, (Executor, Context, DataLoader))]
    assert not left, sorted({type(o).__name__ for o in left})


async def test_graphql_cores_own_helpers_are_the_cycle_this_check_finds(
    collector_off: None,
) -> None:
    """The positive control: Strawberry's executor, whose helpers are bound
    methods, leaves its executor and the request's context to the collector."""
    schema = _schema(StrawberryGraphQLCoreExecutionContext)
    await _execute(schema, Context())
    _cyclic_garbage()

    await _execute(schema, Context())

    garbage = _cyclic_garbage()
    assert any(isinstance(o, Executor) for o in garbage)
    assert any(isinstance(o, Context) for o in garbage)


@pytest.mark.parametrize("mode", SCHEMAS)
async def test_resolvers_gather_and_track_work_through_the_helpers(mode: str) -> None:
    context = Context()

    data = await _execute(SCHEMAS[mode](), context)

    assert [item["pair"] for item in data["items"]] == [
        [f"item {index}", "twice"] for index in range(3)
    ]
    for _ in range(3):
        await asyncio.sleep(0)
    assert sorted(context.settled) == [f"item {index}" for index in range(3)]


async def test_helpers_outlive_their_execution() -> None:
    """A resolver still running once its execution has ended (a sibling of a
    failed field, settled in the background) can still use its helpers."""
    executor = compiled_executor(PlanCache()).build(
        graphql_schema_of(_schema(compiled_executor(PlanCache()))), parse(QUERY)
    )
    assert isinstance(executor, Executor)
    helpers = executor.async_helpers
    assert helpers is not None
    del executor
    gc.collect()
    settled: list[str] = []

    assert await helpers.gather([_echo("a"), _echo("b")]) == ["a", "b"]
    helpers.track([_record(settled, "late"), "not awaitable"])
    for _ in range(3):
        await asyncio.sleep(0)
    assert settled == ["late"]


def test_helpers_of_an_ended_execution_close_what_cannot_run() -> None:
    """Without a running loop, work handed to ``track`` can never run: it is
    closed, as graphql-core's ``settle_in_background`` closes it."""
    executor = compiled_executor(PlanCache()).build(
        graphql_schema_of(_schema(compiled_executor(PlanCache()))), parse(QUERY)
    )
    assert isinstance(executor, Executor)
    helpers = weak_helpers(executor)
    del executor
    gc.collect()
    settled: list[str] = []
    pending = _record(settled, "never")

    helpers.track([pending])

    assert pending.cr_frame is None  # closed: no "never awaited" warning
    assert settled == []


PAGE = """query($id: ID!) { brand(id: $id) { name products(first: 5) {
    edges { node { id name status brand { name } certificate { hash } } }
    pageInfo { hasNextPage } } } }"""
VERIFY = """mutation($code: String!) { verifyProduct(code: $code, scan: {country: "FR"}) {
    result product { name brand { name } } } }"""


async def test_the_gateways_requests_leave_no_cyclic_garbage(sqlite_gateway: Any) -> None:
    """Through the whole app (prepared lane, loaders, middlewares): a page, a
    verification and a small query each free what they built by reference
    counting, so the collector has no request's objects to walk."""
    brand = await sqlite_gateway.register_brand()
    product = await sqlite_gateway.register_product(brand)
    requests = [
        (PAGE, {"id": brand.id}, brand.key),
        (VERIFY, {"code": product["verificationCode"]}, None),
        ("{ viewer { role brandId __typename } }", None, None),
    ]
    for query, variables, key in requests:  # every text parsed, validated, compiled
        await sqlite_gateway.data(query, variables, key=key)
    gc.collect()
    gc.disable()
    try:
        _cyclic_garbage()
        for query, variables, key in requests:
            await sqlite_gateway.data(query, variables, key=key)
        ours = (Executor, RequestContext, Loaders, DataLoader, Request)
        left = [o for o in _cyclic_garbage() if isinstance(o, ours)]
    finally:
        gc.enable()
    assert not left, sorted({type(o).__name__ for o in left})
