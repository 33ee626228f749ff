"""Writes that failed on the server *after* they applied, through a proxy in
front of moto's server: counters move exactly once, or the caller is told the
outcome is unknown."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest

from domain.errors import ServiceUnavailable
from storage import Key, Put, Update
from storage.dynamodb import DynamoDriver
from tests._support.faulty_dynamo import FaultyDynamo, faulty_dynamo

MAX_ATTEMPTS = 4
REGION = "us-east-1"

Unique = Callable[[str], str]


@pytest.fixture
async def proxied(
    moto_endpoint: str, dynamodb_table: str, backoffs: list[int]
) -> AsyncIterator[tuple[DynamoDriver, FaultyDynamo]]:
    """Every write the proxy watches fails after applying: the worst case."""
    with faulty_dynamo(
        moto_endpoint, fail_every=1, operations=("TransactWriteItems", "UpdateItem")
    ) as proxy:
        driver = await DynamoDriver.connect(
            table_name=dynamodb_table,
            region=REGION,
            endpoint_url=proxy.url,
            max_attempts=MAX_ATTEMPTS,
        )
        try:
            yield driver, proxy
        finally:
            await driver.close()


async def counter(driver: DynamoDriver, key: Key) -> object:
    item, _ = await driver.get_item(key, consistent=True)
    return None if item is None else item.get("n")


async def test_a_transaction_applied_before_a_500_is_applied_once(
    proxied: tuple[DynamoDriver, FaultyDynamo], unique: Unique
) -> None:
    driver, proxy = proxied
    key = Key(unique("TXCOUNT"), "STATS")

    await driver.transact_write(
        [Update(key, add={"n": 1}), Put({"PK": unique("TXPRODUCT"), "SK": "META"})]
    )

    assert await counter(driver, key) == 1
    assert proxy.failed == ["TransactWriteItems"]
    assert len(proxy.tokens) == 2 and proxy.tokens[0] == proxy.tokens[1] is not None


async def test_a_single_write_applied_before_a_500_is_reported_not_repeated(
    proxied: tuple[DynamoDriver, FaultyDynamo], unique: Unique
) -> None:
    driver, proxy = proxied
    key = Key(unique("COUNT"), "STATS")

    with pytest.raises(ServiceUnavailable) as unavailable:
        await driver.write(Update(key, add={"n": 1}))

    assert await counter(driver, key) == 1
    assert proxy.forwarded.count("UpdateItem") == 1
    assert unavailable.value.hint is not None and "idempotencyKey" in unavailable.value.hint
