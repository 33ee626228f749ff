"""The response cache (docs/design.md, Response cache): registered queries'
answers kept by document, variables and what the caller may see, and dropped
by exactly the writes that touch what their execution read."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from _asgi import running
from conftest import BACKENDS, Brand, Gateway, _settings, with_lanes

from api.app import create_app
from api.graphql.response_cache import ResponseAnswers, ResponseCache
from api.settings.gateway import Backend, Settings
from api.settings.limits import Execution
from api.settings.operations import OperationSettings
from domain.errors import ConfigurationError

OPERATIONS = """
query BrandPage($id: ID!, $first: Int) {
  brand(id: $id) { id name products(first: $first) { edges { node { id name status } } } }
}
query ProductOne($id: ID!) { product(id: $id) { id name status } }
query ByCode($code: String!) { productByCode(code: $code) { id name verificationCode } }
"""
CACHED = ("BrandPage", "ProductOne", "ByCode")
LANES = (Execution.COMPILED, Execution.GRAPHQL_CORE, Execution.LIBRARY)


def cached_settings(
    backend: str, request: pytest.FixtureRequest, directory: Path, lanes: str = Execution.COMPILED
) -> Settings:
    (directory / "cached.graphql").write_text(OPERATIONS)
    settings = with_lanes(_settings(backend, request), lanes)
    return replace(
        settings,
        cache=True,
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


async def data(gateway: Gateway, name: str, variables: dict[str, Any], key: str | None = None) -> Any:
    response = await call(gateway, name, variables, key)
    body = response.json()
    assert "errors" not in body, body
    return body["data"]


@pytest.fixture(params=BACKENDS, ids=BACKENDS)
async def gateway(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Gateway]:
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
