"""Trusted-documents mode: only registered operations run, for every caller
but the admin key; a resolver-call counter proves nothing else executes."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import strawberry
from _asgi import answer, codes
from _limits import ADMIN_KEY, Client, serve
from graphql import StringValueNode
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_graphql import mutations, queries
from strawberry.types.fields.resolver import StrawberryResolver

from api.graphql.execution.cache import PlanCache
from api.graphql.schema import schema as default_schema
from api.settings.limits import Limits
from api.settings.operations import OperationSettings, TrustedDocuments

PRODUCT = """query ProductByCode($code: String!) {
  productByCode(code: $code) { id }
}
"""
UNREGISTERED = "query Other { explore(first: 1) { edges { node { id } } } }"
NOT_ALLOWED = "PERSISTED_QUERY_NOT_ALLOWED"


class ResolverCalls:
    """Counts calls of every resolver of the served schema. Compiled plans
    call a resolver's function itself, graphql-core calls it through
    Strawberry's wrapper; both take it from ``wrapped_func``, which is wrapped
    here, with an empty plan cache: the schema outlives one test, and a plan
    an earlier test compiled holds the function it found then."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, schema: strawberry.Schema) -> None:
        self.count = 0
        for resolver in _resolvers(schema):
            monkeypatch.setattr(resolver, "wrapped_func", self._counted(resolver.wrapped_func))
        if getattr(schema.execution_context_class, "plans", None) is not None:
            monkeypatch.setattr(schema.execution_context_class, "plans", PlanCache())

    def _counted(self, function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def counted(*args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return function(*args, **kwargs)

        return counted


def _resolvers(schema: strawberry.Schema) -> list[StrawberryResolver[Any]]:
    found: dict[int, StrawberryResolver[Any]] = {}
    for graphql_type in schema.graphql_schema.type_map.values():
        for field in getattr(graphql_type, "fields", {}).values():
            definition = (getattr(field, "extensions", None) or {}).get("strawberry-definition")
            resolver = getattr(definition, "base_resolver", None)
            if isinstance(resolver, StrawberryResolver):
                found[id(resolver)] = resolver
    assert len(found) > 20, "the walk of the schema found too few resolvers"
    return list(found.values())


def hashed(text: str) -> dict[str, Any]:
    digest = hashlib.sha256(text.encode()).hexdigest()
    return {"persistedQuery": {"version": 1, "sha256Hash": digest}}


@asynccontextmanager
async def gateway(tmp_path: Path, mode: TrustedDocuments) -> AsyncIterator[Client]:
    (tmp_path / "product.graphql").write_text(PRODUCT)
    operations = OperationSettings(directory=tmp_path, trusted_documents=mode)
    async with serve(operations=operations) as client:
        yield client


@pytest.fixture
async def enforced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[Client, ResolverCalls]]:
    async with gateway(tmp_path, TrustedDocuments.ENFORCE) as client:
        yield client, ResolverCalls(monkeypatch, client.app.state.graphql.schema)


async def test_registered_operations_run_by_name_hash_and_text(
    enforced: tuple[Client, ResolverCalls],
) -> None:
    client, calls = enforced
    brand_id, _ = await client.brand()
    product = await client.product(ADMIN_KEY, brand_id)
    variables = {"code": product["verificationCode"]}
    expected = {"data": {"productByCode": {"id": product["id"]}}}
    before = calls.count
    nothing = (await client.post(None, variables)).json()
    assert codes(nothing) == ["BAD_USER_INPUT"]
    named = await client.http.post(
        "/graphql", json={"operationName": "ProductByCode", "variables": variables}
    )
    assert answer(named.json()) == expected
    by_hash = (await client.post(None, variables, extensions=hashed(PRODUCT))).json()
    assert answer(by_hash) == expected
    by_text = (await client.post(PRODUCT, variables)).json()
    assert answer(by_text) == expected
    assert calls.count == before + 3


async def test_a_registered_query_runs_by_hash_over_get(
    enforced: tuple[Client, ResolverCalls],
) -> None:
    """The APQ wire format, GET included, works unchanged for registered hashes."""
    client, _ = enforced
    params = {
        "extensions": json.dumps(hashed(PRODUCT)),
        "variables": json.dumps({"code": "none"}),
    }
    body = (await client.http.get("/graphql", params=params)).json()
    assert codes(body) == ["NOT_FOUND"]
    assert body["errors"][0]["path"] == ["productByCode"]
    refused = await client.http.get("/graphql", params={"query": UNREGISTERED})
    assert codes(refused.json()) == [NOT_ALLOWED]


async def test_an_unregistered_document_is_refused_before_execution(
    enforced: tuple[Client, ResolverCalls],
) -> None:
    client, calls = enforced
    _, brand_key = await client.brand()
    before = calls.count
    for key in (None, brand_key):
        body = (await client.post(UNREGISTERED, key=key)).json()
        assert body["data"] is None
        assert codes(body) == [NOT_ALLOWED]
        assert "registered" in body["errors"][0]["extensions"]["hint"]
    apq = (await client.post(UNREGISTERED, extensions=hashed(UNREGISTERED))).json()
    assert codes(apq) == [NOT_ALLOWED]
    assert calls.count == before
    admin = (await client.post(UNREGISTERED, key=ADMIN_KEY)).json()
    assert answer(admin) == {"data": {"explore": {"edges": []}}}
    assert calls.count == before + 2  # explore, and its connection's edges


async def test_an_unregistered_mutation_changes_nothing(
    enforced: tuple[Client, ResolverCalls],
) -> None:
    client, calls = enforced
    brand_id, brand_key = await client.brand()
    mutation = """mutation($b: ID!) {
        registerProduct(input: {brandId: $b, name: "Sneaky"}) { id }
    }"""
    before = calls.count
    body = (await client.post(mutation, {"b": brand_id}, key=brand_key)).json()
    assert codes(body) == [NOT_ALLOWED]
    assert calls.count == before
    stats = await client.data(
        "query($b: ID!) { brand(id: $b) { stats { productCount } } }", {"b": brand_id},
        key=ADMIN_KEY,
    )  # fmt: skip
    assert stats["brand"]["stats"]["productCount"] == 0


@pytest.mark.parametrize("transport", ["graphql-transport-ws", "graphql-ws"])
async def test_an_unregistered_subscription_is_refused(
    enforced: tuple[Client, ResolverCalls], transport: str
) -> None:
    """The two WebSocket protocols run ``schema.stream`` and
    ``schema.subscribe`` respectively; both must refuse."""
    client, calls = enforced
    schema = client.app.state.graphql.schema
    context = _Context(client.app.state.graphql.services)
    document = 'subscription Other { threatAlerts(brandId: "b") { id } }'
    run = schema.stream if transport == "graphql-transport-ws" else schema.subscribe
    stream = await run(document, context_value=context)
    results = [result async for result in stream]
    assert len(results) == 1, results
    errors = results[0].errors
    assert errors is not None, results
    assert [e.extensions["code"] for e in errors] == [NOT_ALLOWED]
    assert calls.count == 0


class _Context:
    def __init__(self, services: Any) -> None:
        from services.auth import ANONYMOUS

        self.services = services
        self.principal = ANONYMOUS
        self.request_id = "test"


async def test_log_mode_runs_and_counts(tmp_path: Path) -> None:
    async with gateway(tmp_path, TrustedDocuments.LOG) as client:
        counter = client.app.state.untrusted_documents
        assert codes((await client.post(PRODUCT, {"code": "x"})).json()) == ["NOT_FOUND"]
        assert counter.count == 0
        body = (await client.post(UNREGISTERED)).json()
        assert answer(body) == {"data": {"explore": {"edges": []}}}
        assert counter.count == 1
        assert (await client.post(UNREGISTERED, key=ADMIN_KEY)).status_code == 200
        assert counter.count == 1, "the admin key is exempt"
        scraped = await client.http.get(
            "/metrics", headers={"Authorization": f"Bearer {ADMIN_KEY}"}
        )
        assert "proofgate_untrusted_documents_total 1.0" in scraped.text


async def test_off_mode_runs_anything(tmp_path: Path) -> None:
    async with gateway(tmp_path, TrustedDocuments.OFF) as client:
        assert answer((await client.post(UNREGISTERED)).json()) == {
            "data": {"explore": {"edges": []}}
        }
        assert client.app.state.untrusted_documents.count == 0


SCALARS = {
    "Decimal": st.just(StringValueNode(value="1.00")),
    "Date": st.just(StringValueNode(value="2026-01-01")),
    "DateTime": st.just(StringValueNode(value="2026-01-01T00:00:00Z")),
    "JSON": st.just(StringValueNode(value="{}")),
}
SDL = default_schema.as_str()


@given(
    document=queries(SDL, custom_scalars=SCALARS) | mutations(SDL, custom_scalars=SCALARS),
    anonymous=st.booleans(),
)
@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
async def test_generated_documents_are_all_refused(
    enforced: tuple[Client, ResolverCalls], document: str, anonymous: bool
) -> None:
    """The positive control is the admin's run of the same document: when it
    executes (``data`` not null), the counter must have moved."""
    client, calls = enforced
    key = None if anonymous else await _brand_key(client)
    before = calls.count
    body = (await client.post(document, key=key)).json()
    assert body["data"] is None, document
    assert codes(body) == [NOT_ALLOWED], document
    assert calls.count == before
    admin = (await client.post(document, key=ADMIN_KEY)).json()
    if admin.get("data"):
        assert calls.count > before, document


async def _brand_key(client: Client) -> str:
    key: str | None = getattr(client, "brand_key", None)
    if key is None:
        _, key = await client.brand()
        client.brand_key = key  # type: ignore[attr-defined]
    return key


async def test_registered_hashes_work_with_apq_off(tmp_path: Path) -> None:
    (tmp_path / "product.graphql").write_text(PRODUCT)
    operations = OperationSettings(directory=tmp_path)
    async with serve(Limits(persisted_queries=0), operations=operations) as client:
        body = (await client.post(None, {"code": "none"}, extensions=hashed(PRODUCT))).json()
        assert codes(body) == ["NOT_FOUND"]
        assert body["errors"][0]["path"] == ["productByCode"]
        other = (await client.post(None, extensions=hashed(UNREGISTERED))).json()
        assert [e["message"] for e in other["errors"]] == ["PersistedQueryNotSupported"]
