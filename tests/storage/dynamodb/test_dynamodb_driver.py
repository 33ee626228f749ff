"""DynamoDriver against moto, with throttling and conflicts injected where moto
cannot produce them."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from botocore.exceptions import ClientError, NoCredentialsError

from domain.errors import (
    ConditionFailed,
    LimitExceeded,
    ProofgateError,
    ServiceUnavailable,
    TransactionCanceled,
)
from storage import (
    Compare,
    Comparison,
    ConditionCheck,
    Delete,
    ItemAbsent,
    ItemExists,
    Key,
    Put,
    Update,
)
from storage.dynamodb import DynamoDriver
from storage.dynamodb import driver as driver_module
from storage.dynamodb._wire import RequestNotSent, ResponseLost
from storage.registry import SortOperator, SortRange
from storage.table import GSI1
from tests._support.queries import query_request
from tests._support.wire import Send, intercept

Unique = Callable[[str], str]
CANCELLED = "Transaction cancelled, please refer cancellation reasons for specific reasons"


def client_error(code: str, operation: str, message: str = "", **extra: Any) -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": message}, **extra}, operation)


def inject(
    monkeypatch: pytest.MonkeyPatch, driver: DynamoDriver, operation: str, failures: list[Exception]
) -> list[dict[str, Any]]:
    """Raise ``failures`` from the operation's calls, one per call, then call through."""
    calls: list[dict[str, Any]] = []

    async def fake(parameters: dict[str, Any], send: Send) -> dict[str, Any]:
        calls.append(parameters)
        if failures:
            raise failures.pop(0)
        return await send(parameters)

    intercept(monkeypatch, driver, operation, fake)
    return calls


def throttled(operation: str) -> ClientError:
    return client_error("ProvisionedThroughputExceededException", operation, "Rate exceeded")


async def test_items_round_trip_in_the_value_model(driver: DynamoDriver, unique: Unique) -> None:
    put = Put(
        {
            "PK": unique("ITEM"),
            "SK": "META",
            "count": 3,
            "price": Decimal("0.10"),
            "big": Decimal("12345678901234567890.123456789012345678"),
            "whole": Decimal("100.000"),
            "blob": b"\x00\xff",
            "flag": False,
            "nothing": None,
            "nested": {"list": [1, "two", Decimal("3.5"), {"deep": b"x"}]},
            "empty": "",
        }
    )
    await driver.write(put)

    item, capacity = await driver.get_item(put.key, consistent=True)

    assert item == put.item
    assert item is not None
    assert type(item["count"]) is int and type(item["whole"]) is int
    assert item["price"] == Decimal("0.1") and str(item["price"]) == "0.1"
    assert item["big"] == Decimal("12345678901234567890.123456789012345678")
    assert type(item["blob"]) is bytes
    assert capacity > 0


async def test_get_of_a_missing_item_is_none(driver: DynamoDriver, unique: Unique) -> None:
    item, _ = await driver.get_item(Key(unique("MISSING"), "META"), consistent=False)
    assert item is None


async def test_failed_condition_on_a_single_write_names_the_item(
    driver: DynamoDriver, unique: Unique
) -> None:
    key = Key(unique("ONCE"), "META")
    await driver.write(Put({"PK": key.pk, "SK": key.sk}, condition=ItemAbsent()))

    with pytest.raises(ConditionFailed) as failed:
        await driver.write(Put({"PK": key.pk, "SK": key.sk}, condition=ItemAbsent()))

    assert failed.value.index == 0
    assert failed.value.key == key


async def test_condition_check_alone_is_checked(driver: DynamoDriver, unique: Unique) -> None:
    key = Key(unique("CHECK"), "META")

    with pytest.raises(ConditionFailed) as failed:
        await driver.write(ConditionCheck(key, ItemExists()))

    assert (failed.value.index, failed.value.key) == (0, key)


async def test_update_clauses_against_the_service(driver: DynamoDriver, unique: Unique) -> None:
    key = Key(unique("COUNTER"), "STATS")
    await driver.write(
        Update(key, set={"name": "a", "gone": 1}, set_if_absent={"created": "t1"}, add={"n": 2})
    )
    await driver.write(
        Update(key, set_if_absent={"created": "t2"}, add={"n": Decimal("0.5")}, remove=("gone",))
    )

    item, _ = await driver.get_item(key, consistent=True)

    assert item == {"PK": key.pk, "SK": key.sk, "name": "a", "created": "t1", "n": Decimal("2.5")}


@pytest.mark.parametrize(
    ("condition", "holds"),
    [
        (Compare("flag", Comparison.EQ, 1), False),
        (Compare("flag", Comparison.NE, 1), True),
        (Compare("flag", Comparison.EQ, True), True),
        (Compare("n", Comparison.LT, "6"), False),
        (Compare("n", Comparison.LT, 6), True),
        (Compare("s", Comparison.GT, b"a"), False),
        (Compare("none", Comparison.EQ, None), True),
        (Compare("missing", Comparison.NE, "x"), True),
    ],
)
async def test_comparisons_are_typed_on_the_service(
    driver: DynamoDriver, unique: Unique, condition: Compare, holds: bool
) -> None:
    """moto alone would hold True = 1 and answer "5" < 6 with a 500."""
    key = Key(unique("TYPED"), "META")
    await driver.write(
        Put({"PK": key.pk, "SK": key.sk, "flag": True, "n": 5, "s": "m", "none": None})
    )

    check = driver.write(Update(key, set={"checked": True}, condition=condition))
    if holds:
        await check
    else:
        with pytest.raises(ConditionFailed):
            await check


async def test_conditional_delete(driver: DynamoDriver, unique: Unique) -> None:
    key = Key(unique("DEL"), "META")
    await driver.write(Put({"PK": key.pk, "SK": key.sk, "version": 2}))

    with pytest.raises(ConditionFailed):
        await driver.write(Delete(key, condition=Compare("version", Comparison.EQ, 1)))
    await driver.write(Delete(key, condition=Compare("version", Comparison.EQ, 2)))

    assert (await driver.get_item(key, consistent=True))[0] is None


async def test_cancellation_reasons_name_the_failing_action(
    driver: DynamoDriver, unique: Unique
) -> None:
    updated, checked = Key(unique("TX"), "A"), Key(unique("TX"), "O")
    await driver.transact_write(
        [Put({"PK": k.pk, "SK": k.sk, "state": "open"}) for k in (updated, checked)]
    )
    actions = [
        Put({"PK": unique("TX"), "SK": "B"}),
        Update(updated, set={"state": "closed"}, condition=Compare("state", Comparison.EQ, "open")),
        Put({"PK": updated.pk, "SK": "C"}),
        ConditionCheck(checked, Compare("state", Comparison.EQ, "closed")),
        Put({"PK": updated.pk, "SK": "D"}, condition=ItemExists()),
    ]

    with pytest.raises(ConditionFailed) as failed:
        await driver.transact_write(actions)

    assert failed.value.index == 3
    assert failed.value.key == checked
    assert (await driver.get_item(Key(updated.pk, "C"), consistent=True))[0] is None
    assert (await driver.get_item(updated, consistent=True))[0] == {
        "PK": updated.pk,
        "SK": "A",
        "state": "open",
    }


async def test_transaction_applies_all_actions(driver: DynamoDriver, unique: Unique) -> None:
    first, second = Key(unique("ALL"), "A"), Key(unique("ALL"), "B")
    await driver.transact_write(
        [
            Put({"PK": first.pk, "SK": first.sk}),
            Update(second, add={"n": 1}, condition=ItemAbsent()),
        ]
    )

    assert (await driver.get_item(first, consistent=True))[0] is not None
    assert (await driver.get_item(second, consistent=True))[0] == {
        "PK": second.pk,
        "SK": second.sk,
        "n": 1,
    }


@pytest.mark.parametrize(
    ("sort", "expected"),
    [
        (SortRange(SortOperator.EQ, "E#2"), ["E#2"]),
        (SortRange(SortOperator.BEGINS_WITH, "E#"), ["E#1", "E#2", "E#3"]),
        (SortRange(SortOperator.BETWEEN, "E#2", "E#3"), ["E#2", "E#3"]),
        (SortRange(SortOperator.BETWEEN, "E#3", "E#2"), []),
        (SortRange(SortOperator.LT, "E#2"), ["E#1"]),
        (SortRange(SortOperator.LTE, "E#2"), ["E#1", "E#2"]),
        (SortRange(SortOperator.GT, "E#2"), ["E#3", "F#1"]),
        (SortRange(SortOperator.GTE, "E#3"), ["E#3", "F#1"]),
    ],
)
async def test_query_sort_conditions(
    driver: DynamoDriver, unique: Unique, sort: SortRange, expected: list[str]
) -> None:
    partition = unique("Q")
    await driver.transact_write(
        [Put({"PK": partition, "SK": sk}) for sk in ("E#1", "E#2", "E#3", "F#1")]
    )

    result = await driver.query(query_request(partition, sort))

    assert [item["SK"] for item in result.items] == expected
    assert result.last_evaluated_key is None


async def test_query_pages_backwards_from_a_start_key(driver: DynamoDriver, unique: Unique) -> None:
    partition = unique("PAGE")
    await driver.transact_write([Put({"PK": partition, "SK": f"E#{n}"}) for n in range(5)])
    every = SortRange(SortOperator.BEGINS_WITH, "E#")

    first = await driver.query(query_request(partition, every, forward=False, limit=2))
    second = await driver.query(
        query_request(partition, every, forward=False, limit=2, start=first.last_evaluated_key)
    )

    assert [i["SK"] for i in first.items] == ["E#4", "E#3"]
    assert first.last_evaluated_key == {"PK": partition, "SK": "E#3"}
    assert [i["SK"] for i in second.items] == ["E#2", "E#1"]
    assert first.capacity > 0


async def test_query_reads_a_global_secondary_index(driver: DynamoDriver, unique: Unique) -> None:
    brand = unique("BRAND")
    await driver.transact_write(
        [
            Put({"PK": unique("P1"), "SK": "META", "GSI1PK": brand, "GSI1SK": "PRODUCT#1"}),
            Put({"PK": unique("P2"), "SK": "META", "GSI1PK": brand, "GSI1SK": "PRODUCT#2"}),
            Put({"PK": unique("P3"), "SK": "META"}),
        ]
    )

    result = await driver.query(
        query_request(brand, SortRange(SortOperator.BEGINS_WITH, "PRODUCT#"), index=GSI1, limit=1)
    )

    assert [i["PK"] for i in result.items] == [unique("P1")]
    assert result.last_evaluated_key == {
        "PK": unique("P1"),
        "SK": "META",
        "GSI1PK": brand,
        "GSI1SK": "PRODUCT#1",
    }


async def test_batch_get_returns_found_items_and_capacity(
    driver: DynamoDriver, unique: Unique
) -> None:
    keys = [Key(unique("B"), str(n)) for n in range(3)]
    await driver.transact_write(
        [Put({"PK": k.pk, "SK": k.sk, "n": i}) for i, k in enumerate(keys[:2])]
    )

    result = await driver.batch_get_items(keys, consistent=False)

    assert sorted(item["n"] for item in result.items) == [0, 1]
    assert result.unprocessed == []
    assert result.capacity > 0


async def test_unprocessed_keys_come_back_as_keys(
    driver: DynamoDriver, unique: Unique, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = [Key(unique("U"), str(n)) for n in range(3)]
    await driver.transact_write([Put({"PK": k.pk, "SK": k.sk}) for k in keys])

    async def partial(parameters: dict[str, Any], send: Send) -> dict[str, Any]:
        request = parameters["RequestItems"][driver.table_name]
        deferred = {**request, "Keys": request["Keys"][1:]}
        first = {**request, "Keys": request["Keys"][:1]}
        response = await send({**parameters, "RequestItems": {driver.table_name: first}})
        response["UnprocessedKeys"] = {driver.table_name: deferred}
        return response

    intercept(monkeypatch, driver, "BatchGetItem", partial)

    result = await driver.batch_get_items(keys, consistent=True)

    assert [(i["PK"], i["SK"]) for i in result.items] == [keys[0]]
    assert result.unprocessed == keys[1:]


async def test_throttled_calls_are_retried_with_backoff(
    driver: DynamoDriver, unique: Unique, monkeypatch: pytest.MonkeyPatch, backoffs: list[int]
) -> None:
    key = Key(unique("T"), "META")
    await driver.write(Put({"PK": key.pk, "SK": key.sk}))
    calls = inject(
        monkeypatch,
        driver,
        "GetItem",
        [throttled("GetItem"), client_error("ThrottlingException", "GetItem")],
    )

    item, _ = await driver.get_item(key, consistent=False)

    assert item == {"PK": key.pk, "SK": key.sk}
    assert len(calls) == 3
    assert backoffs == [1, 2]


@pytest.mark.parametrize("code", ["ProvisionedThroughputExceededException", "RequestLimitExceeded"])
async def test_persistent_throttling_is_service_unavailable(
    driver: DynamoDriver, monkeypatch: pytest.MonkeyPatch, backoffs: list[int], code: str
) -> None:
    calls = inject(monkeypatch, driver, "PutItem", [client_error(code, "PutItem")] * 10)

    with pytest.raises(ServiceUnavailable) as unavailable:
        await driver.write(Put({"PK": "THROTTLED", "SK": "META"}))

    assert len(calls) == driver.max_attempts
    assert backoffs == list(range(1, driver.max_attempts))
    assert code in unavailable.value.message


def server_error(operation: str) -> ClientError:
    return client_error(
        "InternalServerError",
        operation,
        "Internal server error",
        ResponseMetadata={"HTTPStatusCode": 500},
    )


async def test_a_single_write_that_failed_on_the_server_is_not_sent_again(
    driver: DynamoDriver, monkeypatch: pytest.MonkeyPatch, backoffs: list[int]
) -> None:
    """A 5xx write may have applied; sending an ADD again could count it twice."""
    calls = inject(monkeypatch, driver, "UpdateItem", [server_error("UpdateItem")])

    with pytest.raises(ServiceUnavailable) as unavailable:
        await driver.write(Update(Key("COUNT", "5XX"), add={"n": 1}))

    assert len(calls) == 1 and backoffs == []
    assert "may or may not have applied" in unavailable.value.message
    assert unavailable.value.hint is not None and "idempotencyKey" in unavailable.value.hint


async def test_an_html_500_counts_as_a_server_error(
    driver: DynamoDriver, monkeypatch: pytest.MonkeyPatch, backoffs: list[int]
) -> None:
    """moto's own 500s carry an HTML page, so botocore codes them "500"."""
    html = client_error(
        "500", "PutItem", "<!doctype html>", ResponseMetadata={"HTTPStatusCode": 500}
    )
    calls = inject(monkeypatch, driver, "PutItem", [html])

    with pytest.raises(ServiceUnavailable):
        await driver.write(Put({"PK": "HTML", "SK": "500"}))

    assert len(calls) == 1


async def test_reads_are_retried_after_a_server_error(
    driver: DynamoDriver, monkeypatch: pytest.MonkeyPatch, backoffs: list[int]
) -> None:
    calls = inject(monkeypatch, driver, "GetItem", [server_error("GetItem")])

    await driver.get_item(Key("X", "Y"), consistent=False)

    assert len(calls) == 2


async def test_a_transaction_is_retried_with_one_token_until_attempts_run_out(
    driver: DynamoDriver, monkeypatch: pytest.MonkeyPatch, backoffs: list[int], unique: Unique
) -> None:
    calls = inject(
        monkeypatch, driver, "TransactWriteItems", [server_error("TransactWriteItems")] * 10
    )

    with pytest.raises(ServiceUnavailable) as unavailable:
        await driver.transact_write([Put({"PK": unique("TOKEN"), "SK": "A"})])

    assert len(calls) == driver.max_attempts
    tokens = {call["ClientRequestToken"] for call in calls}
    assert len(tokens) == 1 and 1 <= len(tokens.pop()) <= 36
    assert unavailable.value.hint is not None and "idempotencyKey" in unavailable.value.hint


async def test_each_transaction_gets_its_own_token(
    driver: DynamoDriver, monkeypatch: pytest.MonkeyPatch, unique: Unique
) -> None:
    calls = inject(monkeypatch, driver, "TransactWriteItems", [])

    await driver.transact_write([Put({"PK": unique("ONE"), "SK": "A"})])
    await driver.transact_write([Put({"PK": unique("TWO"), "SK": "A"})])

    assert calls[0]["ClientRequestToken"] != calls[1]["ClientRequestToken"]


async def test_backoff_uses_the_store_policy(
    driver: DynamoDriver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the instant-backoff fixture the real capped full-jitter delays run."""
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr(driver_module, "sleep", sleep)
    inject(monkeypatch, driver, "GetItem", [throttled("GetItem")] * 10)

    with pytest.raises(ServiceUnavailable):
        await driver.get_item(Key("X", "Y"), consistent=False)

    assert len(slept) == driver.max_attempts - 1
    assert all(0 <= s <= 0.025 * 2**attempt for attempt, s in enumerate(slept, start=1))


async def test_other_errors_are_not_retried(
    driver: DynamoDriver, monkeypatch: pytest.MonkeyPatch, backoffs: list[int]
) -> None:
    calls = inject(
        monkeypatch, driver, "GetItem", [client_error("AccessDeniedException", "GetItem")]
    )

    with pytest.raises(ProofgateError) as failed:
        await driver.get_item(Key("X", "Y"), consistent=False)

    assert type(failed.value) is ProofgateError
    assert "AccessDeniedException" in failed.value.message
    assert len(calls) == 1 and backoffs == []


async def test_client_side_failures_are_not_retried(
    driver: DynamoDriver, monkeypatch: pytest.MonkeyPatch, backoffs: list[int]
) -> None:
    calls = inject(monkeypatch, driver, "GetItem", [NoCredentialsError()])

    with pytest.raises(ProofgateError, match="NoCredentialsError"):
        await driver.get_item(Key("X", "Y"), consistent=False)

    assert len(calls) == 1 and backoffs == []


async def test_a_request_that_never_left_is_retried_for_reads_and_writes(
    driver: DynamoDriver, monkeypatch: pytest.MonkeyPatch, backoffs: list[int]
) -> None:
    unreachable = RequestNotSent("ClientConnectorError")
    inject(monkeypatch, driver, "GetItem", [unreachable])
    writes = inject(monkeypatch, driver, "PutItem", [unreachable])

    await driver.get_item(Key("X", "Y"), consistent=False)
    await driver.write(Put({"PK": "REACHED", "SK": "META"}))

    assert len(writes) == 2


async def test_a_write_whose_outcome_is_unknown_is_not_sent_again(
    driver: DynamoDriver, monkeypatch: pytest.MonkeyPatch, backoffs: list[int]
) -> None:
    timeout = ResponseLost("SocketTimeoutError")
    reads = inject(monkeypatch, driver, "GetItem", [timeout])
    writes = inject(monkeypatch, driver, "UpdateItem", [timeout])

    await driver.get_item(Key("X", "Y"), consistent=False)
    with pytest.raises(ServiceUnavailable):
        await driver.write(Update(Key("COUNT", "ONCE"), add={"n": 1}))

    assert (len(reads), len(writes)) == (2, 1)


async def test_transaction_conflict_is_a_retryable_cancellation(
    driver: DynamoDriver, monkeypatch: pytest.MonkeyPatch, backoffs: list[int], unique: Unique
) -> None:
    conflict = client_error(
        "TransactionCanceledException",
        "TransactWriteItems",
        f"{CANCELLED} [None, TransactionConflict]",
        CancellationReasons=[
            {"Code": "None"},
            {"Code": "TransactionConflict", "Message": "Conflict"},
        ],
    )
    calls = inject(monkeypatch, driver, "TransactWriteItems", [conflict])

    with pytest.raises(TransactionCanceled) as canceled:
        await driver.transact_write(
            [Put({"PK": unique("C"), "SK": "A"}), Put({"PK": unique("C"), "SK": "B"})]
        )

    assert canceled.value.reasons == [None, "TransactionConflict"]
    assert len(calls) == 1


async def test_reasons_are_read_from_the_message_when_absent(
    driver: DynamoDriver, monkeypatch: pytest.MonkeyPatch, unique: Unique
) -> None:
    canceled = client_error(
        "TransactionCanceledException",
        "TransactWriteItems",
        f"{CANCELLED} [None, ConditionalCheckFailed]",
    )
    inject(monkeypatch, driver, "TransactWriteItems", [canceled])
    second = Key(unique("M"), "B")

    with pytest.raises(ConditionFailed) as failed:
        await driver.transact_write(
            [Put({"PK": unique("M"), "SK": "A"}), ConditionCheck(second, ItemExists())]
        )

    assert (failed.value.index, failed.value.key) == (1, second)


async def test_throttled_transaction_is_retried(
    driver: DynamoDriver, monkeypatch: pytest.MonkeyPatch, backoffs: list[int], unique: Unique
) -> None:
    throttled_tx = client_error(
        "TransactionCanceledException",
        "TransactWriteItems",
        CancellationReasons=[{"Code": "ThrottlingError"}, {"Code": "None"}],
    )
    calls = inject(monkeypatch, driver, "TransactWriteItems", [throttled_tx])
    keys = [Key(unique("R"), "A"), Key(unique("R"), "B")]

    await driver.transact_write([Put({"PK": k.pk, "SK": k.sk}) for k in keys])

    assert len(calls) == 2
    assert (await driver.get_item(keys[1], consistent=True))[0] is not None


async def test_size_limits_from_the_service_are_limit_exceeded(
    driver: DynamoDriver, unique: Unique
) -> None:
    """Update does not know the stored item's size, so the service enforces 400 KB."""
    key = Key(unique("BIG"), "META")

    with pytest.raises(LimitExceeded):
        await driver.write(Update(key, set={"blob": "x" * (401 * 1024)}))


async def test_size_reasons_in_a_transaction_are_limit_exceeded(
    driver: DynamoDriver, monkeypatch: pytest.MonkeyPatch
) -> None:
    too_big = client_error(
        "TransactionCanceledException",
        "TransactWriteItems",
        CancellationReasons=[
            {"Code": "None"},
            {
                "Code": "ValidationError",
                "Message": "Item size has exceeded the maximum allowed size",
            },
        ],
    )
    inject(monkeypatch, driver, "TransactWriteItems", [too_big])

    with pytest.raises(LimitExceeded):
        await driver.transact_write(
            [Put({"PK": "S", "SK": "A"}), Update(Key("S", "B"), set={"a": 1})]
        )


async def test_a_missing_table_is_service_unavailable(moto_endpoint: str) -> None:
    driver = await DynamoDriver.connect(
        table_name="no-such-table", region="us-east-1", endpoint_url=moto_endpoint
    )
    try:
        with pytest.raises(ServiceUnavailable) as unavailable:
            await driver.get_item(Key("A", "B"), consistent=False)
    finally:
        await driver.close()

    assert unavailable.value.hint is not None and "create-table" in unavailable.value.hint
