"""The ledger through the GraphQL schema, on each backend.

``api`` executes operations against the real schema with a fresh request
context per operation (as the HTTP endpoint does), over a store that is
fresh per module and backend. Tests isolate themselves by registering their
own brands.

moto runs TransactWriteItems on several server threads with no lock, so
concurrent transactions could interleave inside it (and crash its deep copy
of the table). DynamoDB serialises transactions on the items they touch; the
``serialized_moto`` fixture gives moto the same guarantee with one lock around
every write, which is what the concurrency tests rely on.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from moto.dynamodb.models import DynamoDBBackend

from api.graphql.schema import schema
from domain.identifiers import hash_api_key
from domain.signing import KeyRing, SigningKey
from resolvers.context import RequestContext
from resolvers.loaders import Loaders
from services.auth import Principal, Role
from services.context import Services
from storage import Storage
from storage.access_patterns import LEDGER_BALANCE
from storage.dynamodb import create_table, open_dynamodb
from storage.sqlite import open_sqlite

ADMIN = Principal(Role.ADMIN)
ADMIN_KEY = "ledger-test-admin-key"
BACKENDS = ("sqlite", "dynamodb")
CURSOR_KEY = bytes(range(32))
REGION = "us-east-1"

REGISTER_BRAND = """mutation($input: RegisterBrandInput!) {
    registerBrand(input: $input) { brand { id } }
}"""
GRANT = """mutation($brandId: ID!, $amount: Decimal!, $key: String!, $memo: String) {
    grantCredits(brandId: $brandId, amount: $amount, idempotencyKey: $key, memo: $memo) {
        id memo createdAt lines { account currency amount }
    }
}"""
BALANCE = """query($id: ID!) {
    brand(id: $id) { ledger { balance { currency posted reserved available version } } }
}"""
REGISTER_PRODUCT = """mutation($input: RegisterProductInput!, $key: String) {
    registerProduct(input: $input, idempotencyKey: $key) { id }
}"""


@dataclass
class Clock:
    """Real time unless pinned; ``advance`` moves a pinned clock."""

    pinned: datetime | None = None

    def __call__(self) -> datetime:
        return self.pinned if self.pinned is not None else datetime.now(UTC)

    def advance(self, delta: timedelta) -> None:
        self.pinned = self() + delta


@dataclass
class LedgerBrand:
    id: str
    principal: Principal
    partner: Principal = field(init=False)

    def __post_init__(self) -> None:
        self.partner = Principal(Role.PARTNER, self.id, "partner-key")

    @property
    def account(self) -> str:
        return f"brand:{self.id}:credits"


class Api:
    def __init__(self, services: Services, backend: str) -> None:
        self.services = services
        self.backend = backend

    @property
    def storage(self) -> Storage:
        return self.services.storage

    @property
    def clock(self) -> Clock:
        clock = self.services.clock
        assert isinstance(clock, Clock)
        return clock

    def context(self, principal: Principal = ADMIN) -> RequestContext:
        loaders = Loaders(self.services.storage, principal.tenant)
        return RequestContext(self.services, principal, loaders, request_id="test")

    async def execute(
        self, query: str, variables: Mapping[str, Any] | None = None, *, as_: Principal = ADMIN
    ) -> dict[str, Any]:
        """A response body as the HTTP endpoint would send it."""
        result = await schema.execute(
            query, variable_values=dict(variables or {}), context_value=self.context(as_)
        )
        body: dict[str, Any] = {"data": result.data}
        if result.errors:
            body["errors"] = [
                {"message": e.message, "path": e.path, "extensions": e.extensions or {}}
                for e in result.errors
            ]
        return body

    @staticmethod
    def codes(body: Mapping[str, Any]) -> list[str]:
        return [error["extensions"].get("code") for error in body.get("errors", [])]

    async def data(
        self, query: str, variables: Mapping[str, Any] | None = None, *, as_: Principal = ADMIN
    ) -> dict[str, Any]:
        body = await self.execute(query, variables, as_=as_)
        assert "errors" not in body, body["errors"]
        data: dict[str, Any] = body["data"]
        return data

    async def brand(self, plan: str = "PRO") -> LedgerBrand:
        """PRO by default: no plan grant, so balances start at exactly zero."""
        data = await self.data(
            REGISTER_BRAND,
            {
                "input": {
                    "name": "Acme",
                    "domain": f"{uuid.uuid4().hex[:8]}.example.com",
                    "plan": plan,
                }
            },
        )
        brand_id = data["registerBrand"]["brand"]["id"]
        return LedgerBrand(brand_id, Principal(Role.BRAND, brand_id, f"key-{brand_id}"))

    async def grant(
        self, brand: LedgerBrand, amount: str, key: str | None = None
    ) -> dict[str, Any]:
        data = await self.data(
            GRANT, {"brandId": brand.id, "amount": amount, "key": key or uuid.uuid4().hex}
        )
        transaction: dict[str, Any] = data["grantCredits"]
        return transaction

    async def balance(self, brand: LedgerBrand) -> dict[str, Any]:
        data = await self.data(BALANCE, {"id": brand.id}, as_=brand.principal)
        balance: dict[str, Any] = data["brand"]["ledger"]["balance"]
        return balance

    async def balance_item(self, brand: LedgerBrand) -> dict[str, Any] | None:
        return await self.storage.get(LEDGER_BALANCE, brand_id=brand.id, currency="CREDIT")

    async def register_product(
        self, brand: LedgerBrand, name: str | None = None, key: str | None = None
    ) -> dict[str, Any]:
        product = {"brandId": brand.id, "name": name or f"Product {uuid.uuid4().hex[:8]}"}
        return await self.execute(
            REGISTER_PRODUCT, {"input": product, "key": key}, as_=brand.principal
        )


async def open_store(backend: str, request: pytest.FixtureRequest) -> Storage:
    if backend == "sqlite":
        return await open_sqlite(":memory:", cursor_key=CURSOR_KEY)
    endpoint: str = request.getfixturevalue("moto_endpoint")
    table = f"ledger-{uuid.uuid4().hex[:8]}"
    await create_table(table_name=table, region=REGION, endpoint_url=endpoint)
    return await open_dynamodb(
        table_name=table, region=REGION, cursor_key=CURSOR_KEY, endpoint_url=endpoint
    )


def make_services(storage: Storage, **options: Any) -> Services:
    return Services(
        storage=storage,
        admin_key_hash=hash_api_key(ADMIN_KEY),
        key_ring=KeyRing.of(SigningKey.generate()),
        hash_salt=os.urandom(32),
        clock=Clock(),
        **options,
    )


@pytest.fixture(scope="module", params=BACKENDS, ids=BACKENDS)
async def api(request: pytest.FixtureRequest) -> AsyncIterator[Api]:
    storage = await open_store(request.param, request)
    yield Api(make_services(storage), request.param)
    await storage.close()


@pytest.fixture
def api_over() -> Callable[[Storage], Api]:
    """An Api over a store the test wraps (e.g. to inject failures)."""

    def build(storage: Storage) -> Api:
        return Api(make_services(storage), storage.backend)

    return build


@pytest.fixture(params=BACKENDS, ids=BACKENDS)
async def fresh_api(request: pytest.FixtureRequest) -> AsyncIterator[Api]:
    """A store of its own: moto deep-copies the whole table once per action of
    a transaction, so 100-action batches stay fast only on a small table."""
    storage = await open_store(request.param, request)
    yield Api(make_services(storage), request.param)
    await storage.close()


@pytest.fixture(scope="module")
async def sqlite_api() -> AsyncIterator[Api]:
    """For tests of logic that does not depend on the backend."""
    storage = await open_sqlite(":memory:", cursor_key=CURSOR_KEY)
    yield Api(make_services(storage), "sqlite")
    await storage.close()


@pytest.fixture(autouse=True)
def _real_time(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test that pins a module's clock must not leave it pinned."""
    yield
    for name in ("api", "sqlite_api"):
        if name in request.fixturenames:
            request.getfixturevalue(name).clock.pinned = None


_WRITES = ("transact_write_items", "put_item", "update_item", "delete_item")


@pytest.fixture
def serialized_moto() -> Iterator[None]:
    lock = threading.RLock()

    def serialized(method: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            with lock:
                return method(*args, **kwargs)

        return call

    with pytest.MonkeyPatch.context() as patch:
        for name in _WRITES:
            patch.setattr(DynamoDBBackend, name, serialized(getattr(DynamoDBBackend, name)))
        yield
