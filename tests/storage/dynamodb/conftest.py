"""A table on the session's moto server, and clients and drivers over it."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from aiobotocore.session import get_session

from storage.dynamodb import DynamoDriver, create_table
from storage.dynamodb import driver as driver_module

REGION = "us-east-1"
MAX_ATTEMPTS = 4


@pytest.fixture(scope="session")
async def dynamodb_table(moto_endpoint: str) -> str:
    name = f"proofgate-dynamodb-{uuid.uuid4().hex[:8]}"
    await create_table(table_name=name, region=REGION, endpoint_url=moto_endpoint)
    return name


@pytest.fixture(scope="session")
async def driver(moto_endpoint: str, dynamodb_table: str) -> AsyncIterator[DynamoDriver]:
    """One driver for the session, as in production; tests that wrap its client
    methods do so through ``monkeypatch``, which unwraps them afterwards."""
    driver = await DynamoDriver.connect(
        table_name=dynamodb_table,
        region=REGION,
        endpoint_url=moto_endpoint,
        max_attempts=MAX_ATTEMPTS,
    )
    yield driver
    await driver.close()


@pytest.fixture
async def raw_client(moto_endpoint: str) -> AsyncIterator[Any]:
    """A plain aiobotocore client, without the backend's guards."""
    async with get_session().create_client(
        "dynamodb", region_name=REGION, endpoint_url=moto_endpoint
    ) as client:
        yield client


@pytest.fixture
def unique() -> Callable[[str], str]:
    """Keys no other test uses, since the table is shared by the session."""
    run = uuid.uuid4().hex[:12]
    return lambda name: f"{name}-{run}"


@pytest.fixture
def backoffs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The attempts the driver backed off before, with the sleeps made instant."""
    attempts: list[int] = []

    def instant(attempt: int) -> float:
        attempts.append(attempt)
        return 0.0

    monkeypatch.setattr(driver_module, "backoff_delay", instant)
    return attempts
