"""The response cache (docs/design.md, Response cache): registered queries'
answers kept by document, variables and what the caller may see, and dropped
by exactly the writes that touch what their execution read."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from _asgi import running
from conftest import ADMIN_KEY as ADMIN
from conftest import BACKENDS, Brand, Gateway, _settings, with_lanes
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.app import create_app
from api.graphql.response_cache import ResponseAnswers, ResponseCache
from api.settings.gateway import Backend, CacheChannel, Environment, Settings
from api.settings.limits import Execution
from api.settings.operations import OperationSettings
from domain.errors import ConfigurationError
from storage import Forwarding, Storage
from storage.access_patterns import PRODUCT_BY_ID
from storage.cache import Generations
from storage.registry import AccessPattern

OPERATIONS = """
query Me { viewer { role brandId } }
query BrandPage($id: ID!, $first: Int) {
  brand(id: $id) { id name products(first: $first) { edges { node { id name status } } } }
}
query ProductOne($id: ID!) { product(id: $id) { id name status } }
query ByCode($code: String!) { productByCode(code: $code) { id name status } }
query ByCodeOwned($code: String!) { productByCode(code: $code) { id name verificationCode } }
"""
CACHED = ("Me", "BrandPage", "ProductOne", "ByCode", "ByCodeOwned")
LANES = (Execution.COMPILED, Execution.GRAPHQL_CORE, Execution.LIBRARY)


def cached_settings(
    backend: str, request: pytest.FixtureRequest, directory: Path, lanes: str = Execution.COMPILED
) -> Settings:
    (directory / "cached.graphql").write_text(OPERATIONS)
    settings = with_lanes(_settings(backend, request), lanes)
    return replace(
        settings,
        cache=True,
        # One process, whose writes are all its cache hears: on DynamoDB the
        # default would read the table's log, untrusted until its first read.
        cache_channel=CacheChannel.NONE,
        response_cache=True,
        response_cache_operations=CACHED,
        operations=OperationSettings(directory=directory),
    )


@asynccontextmanager
async def serve(settings: Settings, backend: str) -> AsyncIterator[Gateway]:
    if settings.backend is Backend.DYNAMODB:
        from storage.dynamodb import create_table

        await create_table(
            table_name=settings.table,
            region=settings.aws_region,
            endpoint_url=settings.dynamodb_endpoint,
        )
    app = create_app(settings)
    async with running(app) as http:
        yield Gateway(app, http, backend)


def answers_of(gateway: Gateway) -> ResponseAnswers:
    answers = gateway.app.state.graphql.response_answers
    assert answers is not None
    return answers


async def call(
    gateway: Gateway, name: str, variables: dict[str, Any], key: str | None = None, **headers: str
) -> httpx.Response:
    if key is not None:
        headers["authorization"] = f"Bearer {key}"
    return await gateway.http.post(
        "/graphql", json={"operationName": name, "variables": variables}, headers=headers
    )


async def data(
    gateway: Gateway, name: str, variables: dict[str, Any], key: str | None = None
) -> Any:
    response = await call(gateway, name, variables, key)
    body = response.json()
    assert "errors" not in body, body
    return body["data"]


@pytest.fixture(params=BACKENDS, ids=BACKENDS)
async def gateway(
    request: pytest.FixtureRequest, tmp_path: Path, applied_once: None
) -> AsyncIterator[Gateway]:
    backend = request.param
    async with serve(cached_settings(backend, request, tmp_path), backend) as gateway:
        yield gateway


async def test_a_repeat_is_answered_from_the_cache(gateway: Gateway) -> None:
    brand = await gateway.register_brand()
    await gateway.register_product(brand)
    cache = answers_of(gateway).cache
    variables = {"id": brand.id, "first": 50}
    first = await call(gateway, "BrandPage", variables, brand.key)
    assert cache.stats.misses["BrandPage"] == 1 and len(cache) == 1
    second = await call(gateway, "BrandPage", variables, brand.key)
    assert cache.stats.hits["BrandPage"] == 1
    assert second.json()["data"] == first.json()["data"]
    actual = second.json()["extensions"]["cost"]["actualQueryCost"]
    assert actual["storageCalls"] == 0


# A write drops exactly the answers whose reads it touched


class World:
    """Two brands, three products, and every caller who may ask."""

    def __init__(self, gateway: Gateway, a: Brand, b: Brand, products: list[dict[str, Any]]):
        self.gateway, self.a, self.b = gateway, a, b
        self.p1, self.p2, self.q1 = products

    @classmethod
    async def made(cls, gateway: Gateway) -> World:
        a = await gateway.register_brand("A", plan="PRO", credits=20)
        b = await gateway.register_brand("B", plan="PRO", credits=20)
        products = [
            await gateway.register_product(a),
            await gateway.register_product(a),
            await gateway.register_product(b),
        ]
        return cls(gateway, a, b, products)

    def requests(self) -> dict[str, tuple[str, dict[str, Any], str | None]]:
        """Each cached request by a label: operation, variables, caller's key."""
        return {
            "page A": ("BrandPage", {"id": self.a.id, "first": 50}, self.a.key),
            "page B": ("BrandPage", {"id": self.b.id, "first": 50}, self.b.key),
            "p1": ("ProductOne", {"id": self.p1["id"]}, self.a.key),
            "p2": ("ProductOne", {"id": self.p2["id"]}, self.a.key),
            "q1": ("ProductOne", {"id": self.q1["id"]}, self.b.key),
            "code p1": ("ByCode", {"code": self.p1["verificationCode"]}, None),
        }


async def fresh(gateway: Gateway, name: str, variables: dict[str, Any], key: str | None) -> Any:
    """The answer executed now, past the response cache: it takes no request
    asking for a trace (its answer says what that execution read)."""
    response = await call(gateway, name, variables, key, **{"x-proofgate-trace": "1"})
    return response.json().get("data")


async def stale_answers(world: World) -> list[str]:
    """Each cached request whose answer differs from one executed now."""
    stale = []
    for label, (name, variables, key) in world.requests().items():
        cached = (await call(world.gateway, name, variables, key)).json().get("data")
        if cached != await fresh(world.gateway, name, variables, key):
            stale.append(label)
    return stale


def labels_held(world: World) -> set[str]:
    held = answers_of(world.gateway).cache.held()
    return {
        label
        for label, (name, variables, _) in world.requests().items()
        if any(k.operation == name and orjson_loads(k.variables) == variables for k in held)
    }


def orjson_loads(data: bytes) -> Any:
    import orjson

    return orjson.loads(data)


async def exactness_problems(world: World) -> list[str]:
    """Warms every answer, writes twice, and lists what went wrong: an answer
    dropped that the write did not touch, one kept that it did, a stale one."""
    gateway, problems = world.gateway, []
    everything = set(world.requests())
    await stale_answers(world)  # warms every answer
    if labels_held(world) != everything:
        problems.append(f"warm: {sorted(labels_held(world))}")
    await gateway.register_product(world.a)  # enters brand A's product partition
    if labels_held(world) != everything - {"page A"}:
        problems.append(f"after an insert into A: {sorted(everything - labels_held(world))}")
    problems += [f"stale after the insert: {label}" for label in await stale_answers(world)]
    await gateway.data(
        'mutation($p: ID!) { recallProduct(productId: $p, reason: "test") { id } }',
        {"p": world.p1["id"]},
        key=world.a.key,
    )  # changes p1's item: its own answers, A's page (its window holds p1)
    dropped = everything - labels_held(world)
    if dropped != {"page A", "p1", "code p1"}:
        problems.append(f"after recalling p1: dropped {sorted(dropped)}")
    problems += [f"stale after the recall: {label}" for label in await stale_answers(world)]
    return problems


@pytest.fixture
def applied_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """On DynamoDB the storage cache applies each invalidation again a second
    later, for a page read from a lagging replica (tested in
    tests/storage/cache/): answers warmed within that second are dropped
    again, rightly, which would blur "exactly" here. Each write is applied once."""
    monkeypatch.setattr("storage.cache.storage.REPLICA_SETTLE_SECONDS", 0.0)


@pytest.fixture(params=[(b, lanes) for b in BACKENDS for lanes in LANES], ids=str)
async def laned_gateway(
    request: pytest.FixtureRequest, tmp_path: Path, applied_once: None
) -> AsyncIterator[Gateway]:
    backend, lanes = request.param
    async with serve(cached_settings(backend, request, tmp_path, lanes), backend) as gateway:
        yield gateway


async def test_a_write_drops_exactly_the_answers_whose_reads_it_touched(
    laned_gateway: Gateway,
) -> None:
    """On each backend and each set of lanes (compiled plans with projected
    pages, graphql-core, the libraries' path): the tags are the storage
    reads, whichever executor made them."""
    world = await World.made(laned_gateway)
    assert await exactness_problems(world) == []


@contextmanager
def planted(monkeypatch: pytest.MonkeyPatch, fault: str) -> Iterator[None]:
    if fault == "deaf":  # hears no invalidation
        monkeypatch.setattr(ResponseCache, "invalidated", lambda self, *a: None)
    elif fault == "drops everything":
        monkeypatch.setattr(ResponseCache, "invalidated", lambda self, *a: self.flushed())
    elif fault == "untagged pages":
        original = ResponseCache.put

        def put(self: ResponseCache, key: Any, data: bytes, cost: Any, log: Any, start: int) -> Any:
            log.pages.clear()
            return original(self, key, data, cost, log, start)

        monkeypatch.setattr(ResponseCache, "put", put)
    yield


@pytest.mark.parametrize("fault", ["deaf", "drops everything", "untagged pages"])
async def test_each_planted_invalidation_fault_is_caught(
    gateway: Gateway, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    world = await World.made(gateway)
    with planted(monkeypatch, fault):
        assert await exactness_problems(world) != []


# The race: an answer computed across a write is not kept


class HeldRead(Forwarding):
    """Stands between the storage cache and the store: once armed, the next
    read of the product by id is made, then held until ``release`` (the write
    runs meanwhile)."""

    def __init__(self, inner: Storage) -> None:
        super().__init__(inner)
        self.armed = False
        self.read_done = asyncio.Event()
        self.release = asyncio.Event()

    async def _hold(self, ap: AccessPattern) -> None:
        if self.armed and ap is PRODUCT_BY_ID:
            self.armed = False
            self.read_done.set()
            await self.release.wait()

    async def get(self, ap: AccessPattern, /, **params: Any) -> Any:
        item = await self.inner.get(ap, **params)
        await self._hold(ap)
        return item

    async def batch_get(self, ap: AccessPattern, params: Any) -> Any:
        items = await self.inner.batch_get(ap, params)
        await self._hold(ap)
        return items


async def overtaken_answer(gateway: Gateway) -> tuple[Any, Any]:
    """A ``ProductOne`` whose product read is made before a recall commits and
    answered after: returns that answer and the next one."""
    world = await World.made(gateway)
    storage = gateway.app.state.storage
    held = HeldRead(storage.inner)
    storage.inner = held
    variables = {"id": world.p1["id"]}
    held.armed = True
    reading = asyncio.create_task(data(gateway, "ProductOne", variables, world.a.key))
    await held.read_done.wait()
    await gateway.data(
        'mutation($p: ID!) { recallProduct(productId: $p, reason: "race") { id } }',
        {"p": world.p1["id"]},
        key=world.a.key,
    )
    held.release.set()
    overtaken = await reading
    return overtaken, await data(gateway, "ProductOne", variables, world.a.key)


async def test_an_answer_overtaken_by_a_write_is_not_kept(gateway: Gateway) -> None:
    overtaken, after = await overtaken_answer(gateway)
    assert overtaken["product"]["status"] == "ACTIVE"  # read before the recall
    assert after["product"]["status"] == "RECALLED"
    assert answers_of(gateway).cache.stats.skipped["overtaken by a write"] == 1


async def test_the_race_test_catches_forgetful_generations(
    gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The planted fault: the response cache's generations never see a write."""

    class Forgetful(Generations):
        def unchanged(self, start: int, slots: Any) -> bool:
            return True

    answers_of(gateway).cache.generations = Forgetful()
    overtaken, after = await overtaken_answer(gateway)
    assert overtaken["product"]["status"] == "ACTIVE"
    assert after["product"]["status"] == "ACTIVE"  # the stale answer was kept


# Across tenants: a caller is never answered with another's cached answer


@dataclass
class Callers:
    world: World
    keys: dict[str, str | None]

    def requests(self) -> dict[str, tuple[str, dict[str, Any]]]:
        world = self.world
        return {
            "me": ("Me", {}),
            "page A": ("BrandPage", {"id": world.a.id, "first": 50}),
            "page B": ("BrandPage", {"id": world.b.id, "first": 50}),
            "p1": ("ProductOne", {"id": world.p1["id"]}),
            "q1": ("ProductOne", {"id": world.q1["id"]}),
            "code p1": ("ByCode", {"code": world.p1["verificationCode"]}),
            "owned p1": ("ByCodeOwned", {"code": world.p1["verificationCode"]}),
            "owned q1": ("ByCodeOwned", {"code": world.q1["verificationCode"]}),
        }


def _seen(body: Any) -> tuple[Any, list[str]]:
    return body.get("data"), sorted(e["extensions"]["code"] for e in body.get("errors", []))


async def crossings(callers: Callers, steps: list[tuple[str, str]]) -> list[str]:
    """Each (caller, request) whose answer differs from the one executed now
    for that caller; the cache is warm from every step before it."""
    gateway, found = callers.world.gateway, []
    requests = callers.requests()
    for who, what in steps:
        name, variables = requests[what]
        key = callers.keys[who]
        cached = await call(gateway, name, variables, key)
        bypass = await call(gateway, name, variables, key, **{"x-proofgate-trace": "1"})
        if _seen(cached.json()) != _seen(bypass.json()):
            found.append(f"{who} asking {what}")
    return found


@pytest.fixture(scope="module")
async def callers(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Callers]:
    settings = cached_settings("sqlite", request, tmp_path_factory.mktemp("callers"))
    async with serve(settings, "sqlite") as gateway:
        world = await World.made(gateway)
        keys: dict[str, str | None] = {
            "anonymous": None,
            "A": world.a.key,
            "A again": await gateway.create_key(world.a, "BRAND"),
            "A partner": await gateway.create_key(world.a, "PARTNER"),
            "B": world.b.key,
            "admin": gateway.admin_key,
        }
        yield Callers(world, keys)


CALLERS = ("anonymous", "A", "A again", "A partner", "B", "admin")
REQUESTS = ("me", "page A", "page B", "p1", "q1", "code p1", "owned p1", "owned q1")


@settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(CALLERS), st.sampled_from(REQUESTS)), min_size=4, max_size=12
    )
)
async def test_no_caller_is_answered_with_anothers_cached_answer(
    callers: Callers, steps: list[tuple[str, str]]
) -> None:
    assert await crossings(callers, steps) == []
    assert answers_of(callers.world.gateway).cache.stats.hits  # answers were served


async def test_the_identity_fuzz_catches_a_key_without_the_caller(
    callers: Callers, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The planted fault: every caller's answers under one scope."""
    cache = answers_of(callers.world.gateway).cache
    cache.flushed()
    monkeypatch.setattr("api.graphql.response_cache.requests.scope_of", lambda principal: "")
    try:
        steps = [("A", "me"), ("anonymous", "me"), ("A", "owned p1"), ("B", "owned p1")]
        found = await crossings(callers, steps)
        assert found == ["anonymous asking me", "B asking owned p1"]
    finally:
        cache.flushed()


# Settings, refusals, what is not cached, metrics


def test_start_up_refuses_what_cannot_be_cached(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    settings = cached_settings("sqlite", request, tmp_path)
    (tmp_path / "mutation.graphql").write_text(
        'mutation Recall($p: ID!) { recallProduct(productId: $p, reason: "x") { id } }'
    )
    for change, wording in (
        ({"response_cache_operations": ("Recall",)}, "'Recall', which is a mutation"),
        ({"response_cache_operations": ("Nope",)}, "'Nope', which is not registered"),
        ({"response_cache_operations": ()}, "lists no operation"),
        ({"cache": False}, "needs PROOFGATE_CACHE=on"),
    ):
        with pytest.raises(ConfigurationError, match=wording):
            create_app(replace(settings, **change))  # type: ignore[arg-type]


def test_the_variables_are_read() -> None:
    env = {
        "PROOFGATE_RESPONSE_CACHE": "on",
        "PROOFGATE_RESPONSE_CACHE_OPERATIONS": "Me, BrandPage",
        "PROOFGATE_RESPONSE_CACHE_BYTES": "4096",
        "PROOFGATE_RESPONSE_CACHE_TTL_MS": "250",
        "PROOFGATE_RESPONSE_CACHE_CDN_SECONDS": "30",
    }
    read = Environment.read(env)
    assert read.response_cache and read.response_cache_operations == ("Me", "BrandPage")
    assert (read.response_cache_bytes, read.response_cache_ttl_ms) == (4096, 250)
    assert read.response_cache_cdn_seconds == 30
    with pytest.raises(ConfigurationError, match="not a GraphQL operation name"):
        Environment.read({"PROOFGATE_RESPONSE_CACHE_OPERATIONS": "Me,1bad"})


async def test_errors_unlisted_operations_and_traces_are_not_kept(gateway: Gateway) -> None:
    brand = await gateway.register_brand()
    cache = answers_of(gateway).cache
    missing = await call(gateway, "ProductOne", {"id": "01HZZZZZZZZZZZZZZZZZZZZZZZ"}, brand.key)
    assert gateway.codes(missing.json())  # NOT_FOUND
    unlisted = "query { viewer { role } }"
    await gateway.http.post("/graphql", json={"query": unlisted})
    await call(gateway, "Me", {}, brand.key, **{"x-proofgate-trace": "1"})
    assert len(cache) == 0 and cache.stats.skipped["errors"] == 1
    await call(gateway, "Me", {}, brand.key)
    assert len(cache) == 1  # the positive control


async def test_the_counters_are_on_metrics(gateway: Gateway) -> None:
    brand = await gateway.register_brand()
    await call(gateway, "BrandPage", {"id": brand.id, "first": 5}, brand.key)
    await call(gateway, "BrandPage", {"id": brand.id, "first": 5}, brand.key)
    await gateway.register_product(brand)
    text = (await gateway.http.get("/metrics", headers={"authorization": f"Bearer {ADMIN}"})).text
    for line in (
        'proofgate_response_cache_reads_total{operation="BrandPage",result="hit"} 1.0',
        'proofgate_response_cache_reads_total{operation="BrandPage",result="miss"} 1.0',
        'proofgate_response_cache_invalidations_total{kind="entry"} 1.0',
        "proofgate_response_cache_bytes 0.0",
    ):
        assert line in text.splitlines(), line


async def test_a_full_cache_evicts_the_least_recently_used(
    request: pytest.FixtureRequest, tmp_path: Path, applied_once: None
) -> None:
    settings = replace(cached_settings("sqlite", request, tmp_path), response_cache_bytes=2000)
    async with serve(settings, "sqlite") as gateway:
        brand = await gateway.register_brand()
        cache = answers_of(gateway).cache
        for first in range(1, 6):
            await call(gateway, "BrandPage", {"id": brand.id, "first": first}, brand.key)
        assert 0 < cache.bytes <= 2000
        assert cache.stats.evictions[("BrandPage", "capacity")] == 5 - len(cache)
        assert len(cache) < 5
