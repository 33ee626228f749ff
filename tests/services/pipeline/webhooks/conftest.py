"""Fixtures of the webhook order's tests, which run on both backends."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from storage import Storage
from storage.dynamodb import create_table, open_dynamodb
from storage.sqlite import open_sqlite
from tests.services.pipeline._support import CURSOR_KEY


@pytest.fixture(params=["sqlite", "dynamodb"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[Storage]:
    """Both backends: the order rests on conditions DynamoDB evaluates itself
    (a ConditionCheck on an item that may be gone), and moto's server refuses
    a Scan."""
    if request.param == "sqlite":
        store = await open_sqlite(":memory:", cursor_key=CURSOR_KEY)
    else:
        endpoint: str = request.getfixturevalue("moto_endpoint")
        table = f"order-{uuid.uuid4().hex[:8]}"
        await create_table(table_name=table, region="us-east-1", endpoint_url=endpoint)
        store = await open_dynamodb(
            table_name=table, region="us-east-1", cursor_key=CURSOR_KEY, endpoint_url=endpoint
        )
    yield store
    await store.close()
