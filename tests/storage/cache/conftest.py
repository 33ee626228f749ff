"""The store a cache under test wraps: an in-memory SQLite of its own."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from storage import Storage
from storage.sqlite import open_sqlite


@pytest.fixture
async def inner() -> AsyncIterator[Storage]:
    storage = await open_sqlite(":memory:", cursor_key=bytes(range(32)))
    yield storage
    await storage.close()
