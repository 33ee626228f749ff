"""The canary: the hot calls run on the data plane, not through botocore.

An aiobotocore/botocore upgrade (they move together: each aiobotocore
release pins its botocore) or a refactor that routed a hot call back through the
client, or a service model that moved DynamoDB off JSON 1.0, would still pass
every behaviour test, only four times slower; this fails instead."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from aiobotocore.client import AioBaseClient
from botocore.parsers import ResponseParser

from storage import ConditionCheck, Delete, ItemExists, Key, Put, Update
from storage.dynamodb import DynamoDriver
from storage.dynamodb._codec import serialize_key
from storage.dynamodb._wire import HOT_OPERATIONS
from storage.registry import SortOperator, SortRange
from tests._support.queries import query_request

Unique = Callable[[str], str]


def test_the_service_model_still_speaks_json_1_0(driver: DynamoDriver) -> None:
    model = driver.client.meta.service_model
    assert model.resolved_protocol == "json"
    assert model.metadata["jsonVersion"] == "1.0"
    assert model.metadata["targetPrefix"] == "DynamoDB_20120810"
    assert set(model.operation_names) >= HOT_OPERATIONS


async def test_hot_calls_skip_botocore(
    driver: DynamoDriver, unique: Unique, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed: list[str] = []
    called: list[str] = []
    real_parse, real_call = ResponseParser._parse_shape, AioBaseClient._make_api_call

    def parse(self: Any, shape: Any, node: Any) -> Any:
        """Every parser, botocore's and aiobotocore's, walks shapes here."""
        parsed.append(shape.name)
        return real_parse(self, shape, node)

    async def make_api_call(self: Any, operation: str, parameters: Any) -> Any:
        called.append(operation)
        return await real_call(self, operation, parameters)

    monkeypatch.setattr(ResponseParser, "_parse_shape", parse)
    monkeypatch.setattr(AioBaseClient, "_make_api_call", make_api_call)
    key = Key(unique("CANARY"), "META")
    sent = driver.wire.calls

    await driver.write(Put({"PK": key.pk, "SK": key.sk, "n": 1}))
    await driver.write(Update(key, add={"n": 1}))
    await driver.get_item(key, consistent=True)
    await driver.batch_get_items([key], consistent=False)
    await driver.query(query_request(key.pk, SortRange(SortOperator.BEGINS_WITH, "M")))
    await driver.transact_write([ConditionCheck(key, condition=ItemExists())])
    await driver.write(Delete(key))

    assert (parsed, called) == ([], [])
    assert driver.wire.calls - sent == 7
    # The counters see the client's path when it is taken.
    await driver.client.get_item(TableName=driver.table_name, Key=serialize_key(key))
    assert called == ["GetItem"] and parsed
