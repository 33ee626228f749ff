"""Fixtures that run every conformance test once per backend.

Each test module gets a fresh store of each backend (a new ``:memory:``
database, a new moto table) shared by its tests: every test writes under its
own unique ids (the ``uid`` fixture) and every read is key-scoped, so tests
cannot see each other's items. Opening a DynamoDB client costs tens of
milliseconds, so a store per test would dominate the run; a table per module
also bounds moto's TransactWriteItems, which deep-copies the whole table once
per action.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from storage import Storage
from storage.cache import CachedStorage
from storage.dynamodb import create_table, open_dynamodb
from storage.sqlite import open_sqlite

from ._support import MotoDeviation, OpenStorage

CURSOR_KEY = bytes(range(32))
REGION = "us-east-1"
BACKENDS = ("sqlite", "dynamodb", "sqlite-cached", "dynamodb-cached")
"""Each backend bare and behind the exact cache (docs/design.md, Storage
cache): the cache must change no answer the suite checks."""
CACHED = "-cached"


@pytest.fixture(scope="module")
def conformance_table() -> str:
    """Unique, so other suites on the same moto server never collide."""
    return f"conformance-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
async def sqlite_storage() -> AsyncIterator[Storage]:
    storage = await open_sqlite(":memory:", cursor_key=CURSOR_KEY)
    yield storage
    await storage.close()


@pytest.fixture(scope="module")
async def dynamodb_storage(moto_endpoint: str, conformance_table: str) -> AsyncIterator[Storage]:
    await create_table(table_name=conformance_table, region=REGION, endpoint_url=moto_endpoint)
    storage = await open_dynamodb(
        table_name=conformance_table,
        region=REGION,
        cursor_key=CURSOR_KEY,
        endpoint_url=moto_endpoint,
    )
    yield storage
    await storage.close()


@pytest.fixture(scope="module")
def sqlite_cached_storage(sqlite_storage: Storage) -> Storage:
    return _cached(sqlite_storage)


@pytest.fixture(scope="module")
def dynamodb_cached_storage(dynamodb_storage: Storage) -> Storage:
    return _cached(dynamodb_storage)


def _cached(storage: Storage) -> Storage:
    """Shared by a module's tests, as the store is: entries outlive a test."""
    return CachedStorage(storage, max_bytes=8 * 1024 * 1024, ttl_seconds=600.0)


@pytest.fixture(params=BACKENDS, ids=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The engine's name (``sqlite`` or ``dynamodb``), cached or not."""
    name: str = request.param
    return name.removesuffix(CACHED)


@pytest.fixture
def cached(request: pytest.FixtureRequest) -> bool:
    return str(request.node.callspec.params["backend"]).endswith(CACHED)


@pytest.fixture
def storage(backend: str, cached: bool, request: pytest.FixtureRequest) -> Storage:
    name = f"{backend}_cached_storage" if cached else f"{backend}_storage"
    store: Storage = request.getfixturevalue(name)
    return store


@pytest.fixture
def open_storage(
    backend: str, cached: bool, storage: Storage, request: pytest.FixtureRequest
) -> OpenStorage:
    """Opens another store of the same backend (the same table), e.g. with another
    cursor key, cached when ``storage`` is. The caller closes it."""
    if backend == "sqlite":

        async def open_sqlite_(cursor_key: bytes) -> Storage:
            store = await open_sqlite(":memory:", cursor_key=cursor_key)
            return _cached(store) if cached else store

        return open_sqlite_
    table: str = request.getfixturevalue("conformance_table")
    endpoint: str = request.getfixturevalue("moto_endpoint")

    async def open_dynamodb_(cursor_key: bytes) -> Storage:
        store = await open_dynamodb(
            table_name=table, region=REGION, cursor_key=cursor_key, endpoint_url=endpoint
        )
        return _cached(store) if cached else store

    return open_dynamodb_


@pytest.fixture
def moto_deviation(backend: str, request: pytest.FixtureRequest) -> MotoDeviation:
    """Marks the test as an expected failure on moto, where moto is known to
    differ from DynamoDB. Strict, so a moto that gets it right fails the mark."""

    def mark(reason: str) -> None:
        if backend == "dynamodb":
            request.applymarker(
                pytest.mark.xfail(reason=f"moto differs from DynamoDB: {reason}", strict=True)
            )

    return mark


@pytest.fixture
def uid() -> str:
    return uuid.uuid4().hex[:12]
