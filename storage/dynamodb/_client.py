"""The aiobotocore client: configuration, and the guard that makes Scan impossible.

One client per process. Creating one costs 10-20 ms once botocore's data
files are read (sessions share their loader, ``_botocore.share_data_loader``;
reading them takes 150 ms or more), so it is entered once and closed with the
driver. The hot calls leave on the data plane (``_wire``), which takes the client's endpoint and
service model and the session's credentials; the client itself carries the
control plane (create-table, the readiness probe), whose responses are
checked against ``x-amz-crc32`` here, as the data plane checks its own.
"""

from __future__ import annotations

import zlib
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any

from aiobotocore.config import AioConfig  # type: ignore[import-untyped, unused-ignore]
from aiobotocore.session import get_session  # type: ignore[import-untyped, unused-ignore]
from botocore.exceptions import (  # type: ignore[import-untyped, unused-ignore]
    ChecksumError,
    ProfileNotFound,
)

from domain.errors import AccessPatternError, ConfigurationError

from ._botocore import share_data_loader
from ._wire import checksum_matches

__all__ = ["FORBIDDEN_OPERATIONS", "Connection", "client_config", "connect", "refuse"]

# Scan, and PartiQL, which can scan a whole table behind a SELECT without a key.
FORBIDDEN_OPERATIONS = ("Scan", "ExecuteStatement", "BatchExecuteStatement", "ExecuteTransaction")

MAX_POOL_CONNECTIONS = 64
CONNECT_TIMEOUT_SECONDS = 2.0
READ_TIMEOUT_SECONDS = 10.0


def client_config() -> Any:
    """Botocore makes one attempt per call: the driver owns retries, so throttling
    is retried in one place with the project's backoff and limits, and attempts
    never multiply across two layers (standard mode's first retry alone could
    wait a second)."""
    return AioConfig(
        retries={"mode": "standard", "total_max_attempts": 1},
        max_pool_connections=MAX_POOL_CONNECTIONS,
        connect_timeout=CONNECT_TIMEOUT_SECONDS,
        read_timeout=READ_TIMEOUT_SECONDS,
    )


def refuse(event_name: str = "", **_: Any) -> None:
    operation = event_name.rsplit(".", 1)[-1]
    raise AccessPatternError(
        f"DynamoDB {operation} is not allowed: every read goes through a registered access pattern"
    )


def verify_checksum(response_dict: dict[str, Any] | None = None, **_: Any) -> None:
    """``before-parse``: botocore checks the CRC only to decide a retry, and the
    client makes one attempt, so a corrupt body would otherwise be parsed."""
    if response_dict is None:
        return
    body = response_dict.get("body")
    if isinstance(body, bytes) and not checksum_matches(response_dict.get("headers", {}), body):
        raise ChecksumError(
            checksum_type="crc32",
            expected_checksum=response_dict["headers"].get("x-amz-crc32"),
            actual_checksum=zlib.crc32(body),
        )


@dataclass(frozen=True)
class Connection:
    client: Any
    credentials: Any
    """The session's credentials (its provider chain; refreshable), or None."""


async def connect(
    stack: AsyncExitStack,
    *,
    region: str,
    endpoint_url: str | None = None,
    access_key_id: str | None = None,
    secret_access_key: str | None = None,
) -> Connection:
    """Enter a DynamoDB client on ``stack``; it closes when the stack does.

    A profile that does not exist fails every call alike, so it is reported
    here, once, as one line (docs/design.md, "Operations")."""
    try:
        session = get_session()
        share_data_loader(session)
        if access_key_id is not None or secret_access_key is not None:
            # As the session's own: the client and the data plane sign with them.
            session.set_credentials(access_key_id, secret_access_key)
        client = await stack.enter_async_context(
            session.create_client(
                "dynamodb", region_name=region, endpoint_url=endpoint_url, config=client_config()
            )
        )
        credentials = await session.get_credentials()
    except ProfileNotFound as error:
        raise ConfigurationError(
            f"No AWS profile {error.kwargs.get('profile')!r} (AWS_PROFILE) in the AWS config files",
            hint="Unset AWS_PROFILE, or add the profile to ~/.aws/config (AWS_CONFIG_FILE); "
            "with keys in the environment or a role, no profile is needed.",
        ) from None
    for operation in FORBIDDEN_OPERATIONS:
        client.meta.events.register(f"provide-client-params.dynamodb.{operation}", refuse)
    client.meta.events.register("before-parse.dynamodb", verify_checksum)
    return Connection(client, credentials)
