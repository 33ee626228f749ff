"""The pipeline against the storage layer directly: a fresh ``:memory:`` store
per test, fast settings, and helpers that write what commands write."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from services.pipeline import Pipeline, PipelineSettings
from storage import CursorCodec, Storage
from storage.sqlite import open_sqlite
from tests.services.pipeline._support import CURSOR_KEY, utcnow

FAST = PipelineSettings(
    poll_interval=timedelta(milliseconds=20),
    idle_poll_interval=timedelta(milliseconds=20),
    lease=timedelta(seconds=5),
    retry_base=timedelta(milliseconds=10),
    retry_cap=timedelta(milliseconds=50),
    max_attempts=3,
    webhook_retry_horizon=timedelta(seconds=30),
    tail_interval=timedelta(milliseconds=50),
    tail_overlap=timedelta(seconds=2),
    webhook_allow_private=True,
    webhook_timeout=timedelta(seconds=2),
)


@pytest.fixture
async def storage() -> AsyncIterator[Storage]:
    store = await open_sqlite(":memory:", cursor_key=CURSOR_KEY)
    yield store
    await store.close()


@pytest.fixture
def settings() -> PipelineSettings:
    return FAST


@pytest.fixture
async def pipeline(storage: Storage, settings: PipelineSettings) -> AsyncIterator[Pipeline]:
    running = Pipeline(storage, settings, cursors=CursorCodec(CURSOR_KEY), clock=utcnow)
    await running.start()
    yield running
    await running.stop()


@pytest.fixture
def t0() -> datetime:
    return datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
