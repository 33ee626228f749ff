"""A fresh store of each backend per test: the version item is one per store."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from storage import Storage
from storage.dynamodb import create_table, open_dynamodb
from storage.sqlite import open_sqlite

CURSOR_KEY = bytes(range(32))
REGION = "us-east-1"
BACKENDS = ("sqlite", "dynamodb")


@pytest.fixture(params=BACKENDS, ids=BACKENDS)
async def storage(request: pytest.FixtureRequest) -> AsyncIterator[Storage]:
    if request.param == "sqlite":
        store = await open_sqlite(":memory:", cursor_key=CURSOR_KEY)
    else:
        endpoint: str = request.getfixturevalue("moto_endpoint")
        table = f"migrate-{uuid.uuid4().hex[:8]}"
        await create_table(table_name=table, region=REGION, endpoint_url=endpoint)
        store = await open_dynamodb(
            table_name=table, region=REGION, cursor_key=CURSOR_KEY, endpoint_url=endpoint
        )
    yield store
    await store.close()
