"""create_table builds exactly what TABLE defines, and is safe to run again."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from aiobotocore.client import AioBaseClient

from domain.errors import ProofgateError
from storage.dynamodb import create_table
from storage.table import TABLE

REGION = "us-east-1"


def _schema(description: dict[str, Any]) -> list[tuple[str, str]]:
    return [(k["AttributeName"], k["KeyType"]) for k in description["KeySchema"]]


async def test_creates_keys_indexes_stream_ttl_and_pitr(
    moto_endpoint: str, raw_client: Any
) -> None:
    name = f"created-{uuid.uuid4().hex[:8]}"

    await create_table(table_name=name, region=REGION, endpoint_url=moto_endpoint)

    table = (await raw_client.describe_table(TableName=name))["Table"]
    assert table["TableStatus"] == "ACTIVE"
    assert _schema(table) == [("PK", "HASH"), ("SK", "RANGE")]
    assert table["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    indexes = {index["IndexName"]: index for index in table["GlobalSecondaryIndexes"]}
    assert {n: _schema(i) for n, i in indexes.items()} == {
        "GSI1": [("GSI1PK", "HASH"), ("GSI1SK", "RANGE")],
        "GSI2": [("GSI2PK", "HASH"), ("GSI2SK", "RANGE")],
    }
    assert all(i["Projection"]["ProjectionType"] == "ALL" for i in indexes.values())
    assert table["StreamSpecification"] == {
        "StreamEnabled": True,
        "StreamViewType": TABLE.stream_view,
    }
    ttl = (await raw_client.describe_time_to_live(TableName=name))["TimeToLiveDescription"]
    assert ttl == {"TimeToLiveStatus": "ENABLED", "AttributeName": "expiresAt"}
    backups = (await raw_client.describe_continuous_backups(TableName=name))[
        "ContinuousBackupsDescription"
    ]
    assert backups["PointInTimeRecoveryDescription"]["PointInTimeRecoveryStatus"] == "ENABLED"


async def test_running_it_again_is_harmless(
    moto_endpoint: str, raw_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"again-{uuid.uuid4().hex[:8]}"
    await create_table(table_name=name, region=REGION, endpoint_url=moto_endpoint)
    await raw_client.put_item(TableName=name, Item={"PK": {"S": "KEEP"}, "SK": {"S": "ME"}})
    operations: list[str] = []
    call = AioBaseClient._make_api_call

    async def record(self: Any, operation: str, parameters: Any) -> Any:
        operations.append(operation)
        return await call(self, operation, parameters)

    monkeypatch.setattr(AioBaseClient, "_make_api_call", record)

    await create_table(table_name=name, region=REGION, endpoint_url=moto_endpoint)

    assert "CreateTable" in operations
    # DynamoDB refuses to enable TTL that is already enabled (moto does not).
    assert "UpdateTimeToLive" not in operations
    item = await raw_client.get_item(TableName=name, Key={"PK": {"S": "KEEP"}, "SK": {"S": "ME"}})
    assert "Item" in item


async def test_an_existing_table_of_another_shape_is_refused(
    moto_endpoint: str, raw_client: Any
) -> None:
    name = f"other-{uuid.uuid4().hex[:8]}"
    await raw_client.create_table(
        TableName=name,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
    )

    with pytest.raises(ProofgateError) as refused:
        await create_table(table_name=name, region=REGION, endpoint_url=moto_endpoint)

    assert "primary key" in refused.value.message
    assert "missing index GSI1" in refused.value.message
