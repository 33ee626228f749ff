"""``create_table``: the table, its indexes, stream, TTL and PITR, from ``TABLE``.

Idempotent so that deploy scripts can run it every time: an existing table is
accepted when its keys, indexes and stream match the definition, and refused
(with the difference named) when they do not.
"""

from __future__ import annotations

import asyncio
import time
from contextlib import AsyncExitStack
from typing import Any

from botocore.exceptions import ClientError  # type: ignore[import-untyped, unused-ignore]

from domain.errors import ProofgateError, ServiceUnavailable

from ..table import TABLE, IndexDefinition, TableDefinition
from ._client import connect
from ._errors import error_code, translate
from ._reach import reaching

__all__ = ["create_table"]

POLL_SECONDS = 1.0
TIMEOUT_SECONDS = 600.0


async def create_table(
    *,
    table_name: str,
    region: str,
    endpoint_url: str | None = None,
    access_key_id: str | None = None,
    secret_access_key: str | None = None,
    timeout: float = TIMEOUT_SECONDS,
) -> bool:
    """Whether this call created the table (rather than found it)."""
    created = True
    async with AsyncExitStack() as stack:
        client = (
            await connect(
                stack,
                region=region,
                endpoint_url=endpoint_url,
                access_key_id=access_key_id,
                secret_access_key=secret_access_key,
            )
        ).client
        async with reaching(
            "CreateTable",
            url=client.meta.endpoint_url,
            endpoint_url=endpoint_url,
            region=region,
            table_name=table_name,
        ):
            try:
                await client.create_table(**TABLE.create_table_request(table_name))
            except ClientError as error:
                if error_code(error) != "ResourceInUseException":
                    raise  # reaching() names what no retry can fix
                created = False
        deadline = time.monotonic() + timeout
        description = await _wait_until_active(client, table_name, deadline)
        _check_matches(description, TABLE)
        await _enable_ttl(client, table_name)
        await _enable_pitr(client, table_name, deadline)
    return created


async def _wait_until_active(client: Any, table_name: str, deadline: float) -> dict[str, Any]:
    """The table and every index must be ACTIVE before TTL and PITR can change."""
    while True:
        table: dict[str, Any] = (await client.describe_table(TableName=table_name))["Table"]
        statuses = [table.get("TableStatus")]
        statuses += [index.get("IndexStatus") for index in table.get("GlobalSecondaryIndexes", [])]
        if all(status == "ACTIVE" for status in statuses):
            return table
        if time.monotonic() >= deadline:
            raise ServiceUnavailable(
                f"Table {table_name} is not ACTIVE yet ({', '.join(map(str, statuses))})"
            )
        await asyncio.sleep(POLL_SECONDS)


def _key_schema(index: IndexDefinition) -> list[tuple[str, str]]:
    return [(index.partition_key, "HASH"), (index.sort_key, "RANGE")]


def _described_schema(description: dict[str, Any]) -> list[tuple[str, str]]:
    return [(k["AttributeName"], k["KeyType"]) for k in description.get("KeySchema", [])]


def _check_matches(table: dict[str, Any], definition: TableDefinition) -> None:
    problems = []
    if _described_schema(table) != _key_schema(definition.primary):
        problems.append("primary key")
    existing = {index["IndexName"]: index for index in table.get("GlobalSecondaryIndexes", [])}
    for index in definition.global_secondary:
        described = existing.get(index.name.value)
        if described is None:
            problems.append(f"missing index {index.name.value}")
        elif _described_schema(described) != _key_schema(index):
            problems.append(f"key schema of {index.name.value}")
        elif described.get("Projection", {}).get("ProjectionType") != "ALL":
            problems.append(f"projection of {index.name.value}")
    stream = table.get("StreamSpecification") or {}
    if not stream.get("StreamEnabled") or stream.get("StreamViewType") != definition.stream_view:
        problems.append("stream")
    if problems:
        raise ProofgateError(
            f"Table {table.get('TableName')} differs from the definition: {', '.join(problems)}",
            hint="Migrate or recreate the table; proofgate never alters keys or indexes in place.",
        )


async def _enable_ttl(client: Any, table_name: str) -> None:
    """DynamoDB refuses to enable TTL twice, so look first."""
    described = (await client.describe_time_to_live(TableName=table_name))["TimeToLiveDescription"]
    status = described.get("TimeToLiveStatus")
    if status in ("ENABLED", "ENABLING"):
        if described.get("AttributeName") != TABLE.ttl_attribute:
            raise ProofgateError(
                f"Table {table_name} expires items by {described.get('AttributeName')!r}, "
                f"not {TABLE.ttl_attribute!r}",
                hint="Disable TTL on the table, then run create-table again.",
            )
        return
    await client.update_time_to_live(**TABLE.ttl_request(table_name))


async def _enable_pitr(client: Any, table_name: str, deadline: float) -> None:
    """Right after creation DynamoDB may answer ContinuousBackupsUnavailable for
    a while; an endpoint without the API at all (some emulators) is tolerated."""
    while True:
        try:
            await client.update_continuous_backups(**TABLE.pitr_request(table_name))
            return
        except ClientError as error:
            code = error_code(error)
            if code in ("UnknownOperationException", "NotImplementedError", "NotImplemented"):
                return
            if code != "ContinuousBackupsUnavailableException" or time.monotonic() >= deadline:
                raise translate(error, "UpdateContinuousBackups") from error
        await asyncio.sleep(POLL_SECONDS)
