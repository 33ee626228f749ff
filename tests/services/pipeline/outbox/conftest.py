"""The outbox's tests run on both backends."""

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
    if request.param == "sqlite":
        storage = await open_sqlite(":memory:", cursor_key=CURSOR_KEY)
    else:
        endpoint: str = request.getfixturevalue("moto_endpoint")
        table = f"outbox-{uuid.uuid4().hex[:8]}"
        await create_table(table_name=table, region="us-east-1", endpoint_url=endpoint)
        storage = await open_dynamodb(
            table_name=table, region="us-east-1", cursor_key=CURSOR_KEY, endpoint_url=endpoint
        )
    yield storage
    await storage.close()
