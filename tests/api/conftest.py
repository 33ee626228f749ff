"""The GraphQL API over HTTP, on each backend.

``gateway`` is the ASGI app with its lifespan running, reached through
httpx's ASGI transport, on each backend. Tests isolate themselves by
registering their own brands, never by relying on an empty store.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any

import httpx
import pytest
from _asgi import GraphQLClient, running
from starlette.applications import Starlette

from api.app import create_app
from api.settings.gateway import Backend, Settings
from api.settings.limits import Execution, Limits
from domain.signing import SigningKey

ADMIN_KEY = "graphql-test-admin-key"
REGION = "us-east-1"
BACKENDS = ("sqlite", "dynamodb")
SIGNING_KEY = SigningKey.generate()


@dataclass
class Brand:
    id: str
    key: str


class Gateway(GraphQLClient):
    admin_key = ADMIN_KEY
    signing_key = SIGNING_KEY

    def __init__(self, app: Starlette, http: httpx.AsyncClient, backend: str) -> None:
        super().__init__(app, http)
        self.backend = backend

    async def register_brand(
        self, name: str = "Acme", plan: str = "FREE", credits: int = 0
    ) -> Brand:
        """A brand and its first key. FREE brands start with 10 credits and each
        registration costs one; ``credits`` grants more for larger tests."""
        data = await self.data(
            """mutation($input: RegisterBrandInput!) {
                registerBrand(input: $input) { apiKey brand { id } }
            }""",
            {
                "input": {
                    "name": name,
                    "domain": f"{uuid.uuid4().hex[:8]}.example.com",
                    "plan": plan,
                }
            },
            key=ADMIN_KEY,
        )
        payload = data["registerBrand"]
        brand = Brand(payload["brand"]["id"], payload["apiKey"])
        if credits:
            await self.data(
                """mutation($b: ID!, $amount: Decimal!, $key: String!) {
                    grantCredits(brandId: $b, amount: $amount, idempotencyKey: $key) { id }
                }""",
                {"b": brand.id, "amount": str(credits), "key": uuid.uuid4().hex},
                key=ADMIN_KEY,
            )
        return brand

    async def create_key(self, brand: Brand, role: str) -> str:
        data = await self.data(
            """mutation($brandId: ID!, $role: ApiKeyRole!) {
                createApiKey(brandId: $brandId, name: "test", role: $role) { id apiKey }
            }""",
            {"brandId": brand.id, "role": role},
            key=brand.key,
        )
        key: str = data["createApiKey"]["apiKey"]
        return key

    async def register_product(self, brand: Brand, **fields: Any) -> dict[str, Any]:
        data = await self.data(
            """mutation($input: RegisterProductInput!) {
                registerProduct(input: $input) {
                    id name sku metadata createdAt verificationCode
                    certificate { hash signature keyId algorithm chainHead }
                }
            }""",
            {"input": {"brandId": brand.id, "name": f"Product {uuid.uuid4().hex[:8]}", **fields}},
            key=brand.key,
        )
        product: dict[str, Any] = data["registerProduct"]
        return product


def _settings(backend: str, request: pytest.FixtureRequest) -> Settings:
    common: dict[str, Any] = {
        "cursor_key": bytes(range(32)),
        "admin_key": ADMIN_KEY,
        "signing_key": SIGNING_KEY.private_key_pem().decode(),
        "hash_salt": bytes(range(32)),
        # Many verifications from one client; tests/api/limits/test_limits_rate.py covers
        # the limits.
        "limits": Limits(rate_limit=None, key_rate_limit=None),
        # Refusal tests spend the failed-auth budget of the one client address the
        # module's tests share, so the tests after them were refused by the throttle
        # or not, by timing; tests/api/limits/test_auth_throttle.py covers it.
        "auth_failure_rate": None,
    }
    if backend == "sqlite":
        return Settings(sqlite_path=":memory:", **common)
    return Settings(
        backend=Backend.DYNAMODB,
        table=f"graphql-{uuid.uuid4().hex[:8]}",
        dynamodb_endpoint=request.getfixturevalue("moto_endpoint"),
        aws_region=REGION,
        **common,
    )


def with_lanes(settings: Settings, execution: str = Execution.COMPILED) -> Settings:
    """``settings`` with these lanes, whatever the run's default: a test of a
    fast path names it (``PROOFGATE_TEST_EXECUTION``, tests/conftest.py)."""
    return replace(settings, limits=replace(settings.limits, execution=execution))


@asynccontextmanager
async def _serve(settings: Settings, backend: str) -> AsyncIterator[Gateway]:
    if settings.backend is Backend.DYNAMODB:
        from storage.dynamodb import create_table

        await create_table(
            table_name=settings.table, region=REGION, endpoint_url=settings.dynamodb_endpoint
        )
    app = create_app(settings)
    async with running(app) as http:
        yield Gateway(app, http, backend)


@pytest.fixture(scope="module")
async def sqlite_gateway(request: pytest.FixtureRequest) -> AsyncIterator[Gateway]:
    async with _serve(_settings("sqlite", request), "sqlite") as gateway:
        yield gateway


@pytest.fixture(scope="module")
async def dynamodb_gateway(request: pytest.FixtureRequest) -> AsyncIterator[Gateway]:
    async with _serve(_settings("dynamodb", request), "dynamodb") as gateway:
        yield gateway


@pytest.fixture
async def fresh_dynamodb_gateway(request: pytest.FixtureRequest) -> AsyncIterator[Gateway]:
    async with _serve(_settings("dynamodb", request), "dynamodb") as gateway:
        yield gateway


@pytest.fixture(params=BACKENDS, ids=BACKENDS)
def gateway(request: pytest.FixtureRequest) -> Gateway:
    """One store per test module and backend."""
    served: Gateway = request.getfixturevalue(f"{request.param}_gateway")
    return served


@pytest.fixture(params=BACKENDS, ids=BACKENDS)
def batch_gateway(request: pytest.FixtureRequest) -> Gateway:
    """For tests that write large batches: a moto table of their own, because
    moto copies the whole table for every action of a transaction, so batches
    into a table that grew through a module crawl. SQLite needs no such care."""
    name = "sqlite_gateway" if request.param == "sqlite" else "fresh_dynamodb_gateway"
    served: Gateway = request.getfixturevalue(name)
    return served
