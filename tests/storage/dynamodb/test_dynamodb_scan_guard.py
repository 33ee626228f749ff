"""The Scan tripwire of tests/conftest.py fires at the client and at the server,
and the backend's own clients refuse Scan even without it."""

from __future__ import annotations

from typing import Any

import botocore.session  # type: ignore[import-untyped]
import httpx
import pytest

from domain.errors import AccessPatternError
from storage.dynamodb import DynamoDriver

REGION = "us-east-1"


async def test_an_async_client_scan_trips(
    raw_client: Any, dynamodb_table: str, scan_tripwire: Any
) -> None:
    with scan_tripwire.expected() as tripped, pytest.raises(AssertionError, match="never scan"):
        await raw_client.scan(TableName=dynamodb_table)

    assert tripped == ["client:Scan"]


async def test_partiql_trips(raw_client: Any, dynamodb_table: str, scan_tripwire: Any) -> None:
    with scan_tripwire.expected() as tripped, pytest.raises(AssertionError):
        await raw_client.execute_statement(Statement=f'SELECT * FROM "{dynamodb_table}"')

    assert tripped == ["client:ExecuteStatement"]


def test_a_sync_client_scan_trips(
    moto_endpoint: str, dynamodb_table: str, scan_tripwire: Any
) -> None:
    client = botocore.session.get_session().create_client(
        "dynamodb", region_name=REGION, endpoint_url=moto_endpoint
    )

    with scan_tripwire.expected() as tripped, pytest.raises(AssertionError):
        client.scan(TableName=dynamodb_table)

    assert tripped == ["client:Scan"]


async def test_a_scan_that_bypasses_botocore_trips_at_the_server(
    moto_endpoint: str, dynamodb_table: str, scan_tripwire: Any
) -> None:
    async with httpx.AsyncClient(base_url=moto_endpoint) as http:
        with scan_tripwire.expected() as tripped:
            response = await http.post(
                "/",
                content=f'{{"TableName": "{dynamodb_table}"}}',
                headers={
                    "X-Amz-Target": "DynamoDB_20120810.Scan",
                    "Content-Type": "application/x-amz-json-1.0",
                    # moto routes by the service named in the credential scope.
                    "Authorization": "AWS4-HMAC-SHA256 Credential=testing/20240101/"
                    f"{REGION}/dynamodb/aws4_request, SignedHeaders=host, Signature=0",
                },
            )

    assert tripped == ["server:scan"]
    assert response.status_code == 400
    assert "ValidationException" in response.text


async def test_a_query_passes_the_tripwire(
    raw_client: Any, dynamodb_table: str, scan_tripwire: Any
) -> None:
    with scan_tripwire.expected() as tripped:
        await raw_client.query(
            TableName=dynamodb_table,
            KeyConditionExpression="PK = :p",
            ExpressionAttributeValues={":p": {"S": "NOTHING"}},
        )

    assert tripped == []


async def test_the_backend_client_refuses_scan_on_its_own(
    driver: DynamoDriver, dynamodb_table: str, scan_tripwire: Any
) -> None:
    """Called past the tripwire, the production guard stops Scan before it is sent."""
    for operation, parameters in [
        ("Scan", {"TableName": dynamodb_table}),
        ("ExecuteStatement", {"Statement": f'SELECT * FROM "{dynamodb_table}"'}),
    ]:
        with (
            scan_tripwire.expected() as tripped,
            pytest.raises(AccessPatternError, match=operation),
        ):
            await scan_tripwire.unguarded_call(driver.client, operation, parameters)

        assert tripped == []
