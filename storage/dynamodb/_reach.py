"""Whether the table can be reached at all: credentials, endpoint, table.

These fail every call alike, so they are checked once where the store is
opened or created and reported as one line with a hint (docs/design.md,
"Operations"), instead of a botocore traceback or a retry loop.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AsyncExitStack, contextmanager
from typing import Any

from botocore.exceptions import (  # type: ignore[import-untyped, unused-ignore]
    ClientError,
    EndpointConnectionError,
    NoCredentialsError,
    NoRegionError,
    PartialCredentialsError,
)

from domain.errors import ConfigurationError, ServiceUnavailable

from ..access_patterns import HEALTH_PROBE
from ._client import connect
from ._codec import serialize_key
from ._errors import error_code, translate

__all__ = ["check_table", "reaching"]

_PROBE_KEY = HEALTH_PROBE.key()
_CREDENTIALS_HINT = (
    "Set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE); for moto or "
    "DynamoDB Local any dummy values do, e.g. AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local."
)
_ENDPOINT_HINT = (
    "Check --endpoint (PROOFGATE_DYNAMODB_ENDPOINT) and that the emulator runs there, "
    "on a port other than the gateway's."
)
_TABLE_HINT = "Create it with `proofgate create-table`, or check PROOFGATE_TABLE and the region."
# What a web server that is not DynamoDB answers its POST: no such path, no
# such method. DynamoDB answers every API call on `/`, errors with 400 or 5xx.
_NOT_DYNAMODB = frozenset({404, 405, 501})
_NOT_DYNAMODB_HINT = (
    "Point --endpoint (PROOFGATE_DYNAMODB_ENDPOINT) at DynamoDB Local or DynamoDB itself, "
    "not at the gateway's own port or another web server."
)


@contextmanager
def reaching(
    operation: str, *, endpoint_url: str | None, region: str, table_name: str
) -> Iterator[None]:
    """Turns the errors no retry can fix into ones that say what to change."""
    where = endpoint_url or f"region {region}"
    try:
        yield
    except (NoCredentialsError, PartialCredentialsError):
        raise ConfigurationError(
            f"No AWS credentials to sign DynamoDB requests to {where}", hint=_CREDENTIALS_HINT
        ) from None
    except NoRegionError:
        raise ConfigurationError(
            "No AWS region for DynamoDB", hint="Set PROOFGATE_AWS_REGION or --region."
        ) from None
    except EndpointConnectionError:
        raise ServiceUnavailable(f"Cannot reach DynamoDB at {where}", hint=_ENDPOINT_HINT) from None
    except ClientError as error:
        if error_code(error) == "ResourceNotFoundException":
            raise ServiceUnavailable(
                f"DynamoDB table {table_name} does not exist at {where}", hint=_TABLE_HINT
            ) from None
        status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        if status in _NOT_DYNAMODB:
            raise ConfigurationError(
                f"{where} does not answer as DynamoDB ({operation}: HTTP {status})",
                hint=_NOT_DYNAMODB_HINT,
            ) from None
        raise translate(error, operation) from error


async def check_table(
    *,
    table_name: str,
    region: str,
    endpoint_url: str | None = None,
    access_key_id: str | None = None,
    secret_access_key: str | None = None,
) -> None:
    """One GetItem of the health probe (AP21), one attempt: the permission the
    readiness probe needs anyway, and it fails fast on each of the three."""
    async with AsyncExitStack() as stack:
        connection = await connect(
            stack,
            region=region,
            endpoint_url=endpoint_url,
            access_key_id=access_key_id,
            secret_access_key=secret_access_key,
        )
        client: Any = connection.client
        with reaching("GetItem", endpoint_url=endpoint_url, region=region, table_name=table_name):
            await client.get_item(TableName=table_name, Key=serialize_key(_PROBE_KEY))
