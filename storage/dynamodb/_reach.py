"""Whether the table can be reached at all, and if not, whether waiting helps.

What fails every call alike is checked once where the store is opened or
created and reported as one line with a hint (docs/design.md, "Operations"),
instead of a botocore traceback. Two kinds are told apart, because ``serve``
treats them differently (docs/design.md, Degraded start):

- a misconfiguration, ``ConfigurationError``: no credentials or region, a
  host name that does not resolve, credentials DynamoDB refuses, access
  denied, no such table, or a web server that is not DynamoDB. Waiting
  changes none of these;
- an outage, ``ServiceUnavailable``: a connection refused or timed out while
  the name resolves, no answer within the read timeout, a dropped
  connection, a 5xx, throttling. These pass by themselves.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

from botocore.exceptions import (  # type: ignore[import-untyped, unused-ignore]
    ClientError,
    HTTPClientError,
    NoCredentialsError,
    NoRegionError,
    PartialCredentialsError,
)
from botocore.exceptions import (  # type: ignore[import-untyped, unused-ignore]
    ConnectionError as BotocoreConnectionError,
)

from domain.errors import ConfigurationError, ProofgateError, ServiceUnavailable

from ..access_patterns import HEALTH_PROBE
from ._client import connect
from ._codec import serialize_key
from ._errors import error_code, is_server_error, is_throttled, translate

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
_HOST_HINT = (
    "Check --endpoint (PROOFGATE_DYNAMODB_ENDPOINT) for a typo, or PROOFGATE_AWS_REGION "
    "when no endpoint is set."
)
_TABLE_HINT = "Create it with `proofgate create-table`, or check PROOFGATE_TABLE and the region."
_ACCESS_HINT = (
    "Grant the task role the table's actions (deploy/service.yaml lists them), "
    "or check PROOFGATE_TABLE and the region."
)
# What a web server that is not DynamoDB answers its POST: no such path, no
# such method. DynamoDB answers every API call on `/`, errors with 400 or 5xx.
_NOT_DYNAMODB = frozenset({404, 405, 501})
_NOT_DYNAMODB_HINT = (
    "Point --endpoint (PROOFGATE_DYNAMODB_ENDPOINT) at DynamoDB Local or DynamoDB itself, "
    "not at the gateway's own port or another web server."
)
# DynamoDB's answers to a request signed with keys it does not accept.
_REFUSED_CREDENTIALS = frozenset(
    {
        "UnrecognizedClientException",
        "InvalidSignatureException",
        "IncompleteSignatureException",
        "MissingAuthenticationTokenException",
        "InvalidClientTokenId",
        "ExpiredTokenException",
    }
)
# getaddrinfo's "no such name" (EAI_NODATA: the name exists, without an
# address); EAI_AGAIN and EAI_FAIL are the resolver's own trouble, an outage.
_UNKNOWN_NAME = frozenset(
    code for code in (socket.EAI_NONAME, getattr(socket, "EAI_NODATA", None)) if code is not None
)


@asynccontextmanager
async def reaching(
    operation: str, *, url: str, endpoint_url: str | None, region: str, table_name: str
) -> AsyncIterator[None]:
    """Turns the errors no retry can fix into ones that say what to change, and
    an outage into ``ServiceUnavailable``; ``url`` is the endpoint the client
    resolved, ``endpoint_url`` the one the operator set, if any."""
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
    except (BotocoreConnectionError, HTTPClientError) as error:
        # Refused, timed out, dropped: an outage, unless the name is unknown.
        await _require_known_host(url, where)
        raise ServiceUnavailable(
            f"Cannot reach DynamoDB at {where} ({type(error).__name__})", hint=_ENDPOINT_HINT
        ) from None
    except ClientError as error:
        raise _answered(error, operation, where, table_name) from None


async def _require_known_host(url: str, where: str) -> None:
    host = urlsplit(url).hostname or ""
    try:
        await asyncio.get_running_loop().getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except socket.gaierror as error:
        if error.errno in _UNKNOWN_NAME:
            raise ConfigurationError(
                f"Cannot reach DynamoDB at {where}: no host named {host}", hint=_HOST_HINT
            ) from None


def _answered(error: ClientError, operation: str, where: str, table_name: str) -> ProofgateError:
    """What an answer that is an error means for the operator."""
    code = error_code(error)
    status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    if code == "ResourceNotFoundException":
        return ConfigurationError(
            f"DynamoDB table {table_name} does not exist at {where}", hint=_TABLE_HINT
        )
    if code in _REFUSED_CREDENTIALS:
        return ConfigurationError(
            f"DynamoDB at {where} refuses these AWS credentials ({code})", hint=_CREDENTIALS_HINT
        )
    if code == "AccessDeniedException":
        return ConfigurationError(
            f"Not allowed to {operation} on DynamoDB table {table_name} at {where}",
            hint=_ACCESS_HINT,
        )
    if status in _NOT_DYNAMODB:
        return ConfigurationError(
            f"{where} does not answer as DynamoDB ({operation}: HTTP {status})",
            hint=_NOT_DYNAMODB_HINT,
        )
    if is_throttled(error) or is_server_error(error):
        return ServiceUnavailable(
            f"DynamoDB at {where} is unavailable ({operation}: {code or f'HTTP {status}'})",
            hint="It answers again by itself; the gateway retries.",
        )
    return translate(error, operation)


async def check_table(
    *,
    table_name: str,
    region: str,
    endpoint_url: str | None = None,
    access_key_id: str | None = None,
    secret_access_key: str | None = None,
) -> None:
    """One GetItem of the health probe (AP21), one attempt: the permission the
    readiness probe needs anyway, and it fails fast on each of the above."""
    async with AsyncExitStack() as stack:
        connection = await connect(
            stack,
            region=region,
            endpoint_url=endpoint_url,
            access_key_id=access_key_id,
            secret_access_key=secret_access_key,
        )
        client: Any = connection.client
        async with reaching(
            "GetItem",
            url=client.meta.endpoint_url,
            endpoint_url=endpoint_url,
            region=region,
            table_name=table_name,
        ):
            await client.get_item(TableName=table_name, Key=serialize_key(_PROBE_KEY))
