"""Calls whose answer broke *after* moto acted, through a proxy in front of
moto's server (a 500, a reset connection, a corrupt body): counters move
exactly once, or the caller is told the outcome is unknown; a corrupt body
is never read as data."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any

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


@pytest.fixture
async def proxy_of(
    moto_endpoint: str, dynamodb_table: str, backoffs: list[int]
) -> AsyncIterator[Callable[..., Awaitable[tuple[DynamoDriver, FaultyDynamo]]]]:
    """Opens a driver through a faulty proxy of the given kind; closes both."""
    async with AsyncExitStack() as stack:

        async def open_(**fault: Any) -> tuple[DynamoDriver, FaultyDynamo]:
            proxy = stack.enter_context(faulty_dynamo(moto_endpoint, fail_every=1, **fault))
            driver = await DynamoDriver.connect(
                table_name=dynamodb_table,
                region=REGION,
                endpoint_url=proxy.url,
                max_attempts=MAX_ATTEMPTS,
            )
            stack.push_async_callback(driver.close)
            return driver, proxy

        yield open_


async def test_a_corrupt_answer_is_read_again_never_returned(
    proxy_of: Callable[..., Awaitable[tuple[DynamoDriver, FaultyDynamo]]],
    driver: DynamoDriver,
    unique: Unique,
) -> None:
    """The body's x-amz-crc32 does not match: a read is sent again, and the
    changed digit never reaches the caller."""
    key = Key(unique("CRC"), "STATS")
    await driver.write(Put({"PK": key.pk, "SK": key.sk, "n": 1}))
    proxied, proxy = await proxy_of(operations=("GetItem",), fault="corrupt", limit=1)

    assert await counter(proxied, key) == 1
    assert proxy.failed == ["GetItem"]
    assert proxy.forwarded.count("GetItem") == 2


async def test_a_corrupt_answer_to_a_single_write_is_an_unknown_outcome(
    proxy_of: Callable[..., Awaitable[tuple[DynamoDriver, FaultyDynamo]]],
    driver: DynamoDriver,
    unique: Unique,
) -> None:
    key = Key(unique("CRCW"), "STATS")
    proxied, proxy = await proxy_of(operations=("UpdateItem",), fault="corrupt", limit=1)

    with pytest.raises(ServiceUnavailable) as unavailable:
        await proxied.write(Update(key, add={"n": 1}))

    assert await counter(driver, key) == 1
    assert proxy.forwarded.count("UpdateItem") == 1
    assert unavailable.value.hint is not None and "idempotencyKey" in unavailable.value.hint


async def test_a_write_whose_connection_reset_after_it_applied_is_not_sent_again(
    proxy_of: Callable[..., Awaitable[tuple[DynamoDriver, FaultyDynamo]]],
    driver: DynamoDriver,
    unique: Unique,
) -> None:
    """The request left and applied; the connection then broke. An ADD sent
    again would count twice."""
    key = Key(unique("RESET"), "STATS")
    proxied, proxy = await proxy_of(operations=("UpdateItem",), fault="reset", limit=1)

    with pytest.raises(ServiceUnavailable) as unavailable:
        await proxied.write(Update(key, add={"n": 1}))

    assert await counter(driver, key) == 1
    assert proxy.failed == ["UpdateItem"]
    assert proxy.forwarded.count("UpdateItem") == 1
    assert unavailable.value.hint is not None and "idempotencyKey" in unavailable.value.hint


async def test_reads_and_transactions_are_sent_again_after_a_reset(
    proxy_of: Callable[..., Awaitable[tuple[DynamoDriver, FaultyDynamo]]],
    driver: DynamoDriver,
    unique: Unique,
) -> None:
    key = Key(unique("RESETTX"), "STATS")
    proxied, proxy = await proxy_of(
        operations=("GetItem", "TransactWriteItems"), fault="reset", limit=2
    )

    await proxied.transact_write([Update(key, add={"n": 1}), Put({"PK": key.pk, "SK": "OTHER"})])
    item, _ = await proxied.get_item(key, consistent=True)

    assert item is not None and item["n"] == 1
    assert proxy.failed == ["TransactWriteItems", "GetItem"]


async def test_a_write_that_never_left_is_sent_again(
    dynamodb_table: str, driver: DynamoDriver, unique: Unique, backoffs: list[int]
) -> None:
    """Nothing listens on the port: the connection is refused, so nothing was
    applied and the write goes out again (here: until the attempts run out)."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    unreachable = await DynamoDriver.connect(
        table_name=dynamodb_table,
        region=REGION,
        endpoint_url=f"http://127.0.0.1:{port}",
        max_attempts=MAX_ATTEMPTS,
    )
    try:
        with pytest.raises(ServiceUnavailable, match=f"failed {MAX_ATTEMPTS} times"):
            await unreachable.write(Update(Key(unique("NEVER"), "STATS"), add={"n": 1}))
    finally:
        await unreachable.close()
    assert backoffs == list(range(1, MAX_ATTEMPTS))
