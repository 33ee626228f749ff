"""The data plane: DynamoDB's hot calls signed with SigV4 and sent on aiohttp.

botocore validates, serialises, emits a dozen events and walks the output
shape for every AttributeValue of a response; on a page of fifty products that
parser alone was most of the gateway's CPU
(docs/design.md, DynamoDB data plane). Here a request body is one
``orjson.dumps``, signed with SigV4 (``_signing``, held to botocore's
``SigV4Auth``) and credentials from the session's provider chain (refreshed
by it), sent on a pooled aiohttp session, and a 2xx body is one
``orjson.loads``. Everything else stays botocore's:
endpoint resolution (the client's), and every error response, parsed by
botocore's own parser into the exception class the client would have raised,
so retry decisions and error mapping see exactly what they saw before.

Two transport faults are told apart here, because only the caller knows
whether a call may be sent twice: ``RequestNotSent`` (the connection was never
made, so nothing was applied) and ``ResponseLost`` (the request may have
arrived; the answer broke, timed out or failed its ``x-amz-crc32`` check).
"""

from __future__ import annotations

import base64
import ssl
import zlib
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final

import aiohttp
import orjson
from botocore.exceptions import NoCredentialsError  # type: ignore[import-untyped, unused-ignore]

from ._aiohttp import environment_proxy
from ._botocore import ca_bundle, parse_error
from ._signing import Signer

__all__ = [
    "HOT_OPERATIONS",
    "KEEPALIVE_SECONDS",
    "RequestNotSent",
    "ResponseLost",
    "Wire",
    "checksum_matches",
    "encode_body",
]

HOT_OPERATIONS: Final = frozenset(
    {
        "GetItem",
        "BatchGetItem",
        "Query",
        "PutItem",
        "UpdateItem",
        "DeleteItem",
        "TransactWriteItems",
    }
)
KEEPALIVE_SECONDS = 12.0
"""aiobotocore's own: an idle connection is dropped before the service drops
it, since a write sent on one the service already closed has an unknown outcome."""
_TARGET_PREFIX = "DynamoDB_20120810."
_CONTENT_TYPE = "application/x-amz-json-1.0"
_SIGNING_NAME = "dynamodb"


class RequestNotSent(Exception):
    """No connection was made: the request never left, so nothing was applied."""


class ResponseLost(Exception):
    """The request may have arrived; its answer broke, timed out or was corrupt."""


def _bytes(value: object) -> str:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(value).decode("ascii")
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def encode_body(parameters: Mapping[str, Any]) -> bytes:
    """The JSON botocore's serializer sends: binary attribute values in base64."""
    return orjson.dumps(parameters, default=_bytes)


def checksum_matches(headers: Mapping[str, str], body: bytes) -> bool:
    """DynamoDB's ``x-amz-crc32`` over the body as received; absent is not wrong
    (a proxy or an emulator may not send it)."""
    expected = headers.get("x-amz-crc32")
    return expected is None or (expected.isdigit() and int(expected) == zlib.crc32(body))


def _headers(raw: tuple[tuple[bytes, bytes], ...]) -> dict[str, str]:
    """Lower-cased, as aiobotocore hands them to botocore's parser."""
    return {name.decode("utf-8").lower(): value.decode("utf-8") for name, value in raw}


class Wire:
    """One pooled HTTP session to the client's endpoint, for the hot calls."""

    def __init__(self, client: Any, credentials: Any, session: aiohttp.ClientSession) -> None:
        self.client = client
        self._credentials = credentials
        self._session = session
        self._url: str = client.meta.endpoint_url
        self._region: str = client.meta.region_name
        self._proxy = environment_proxy(self._url)
        """HTTPS_PROXY/NO_PROXY as botocore honours them, read once: aiohttp's
        ``trust_env`` reads the environment on a thread for every request."""
        self._signer = Signer(self._url, self._region, _SIGNING_NAME)
        self.calls = 0
        """Calls sent on this path: the canary test's proof the fast path runs."""

    @classmethod
    def open(
        cls,
        client: Any,
        credentials: Any,
        *,
        pool: int,
        connect_timeout: float,
        read_timeout: float,
    ) -> Wire:
        """``credentials`` is the session's (botocore's provider chain, refreshable);
        TLS verifies against botocore's CA bundle, as the client would."""
        connector = aiohttp.TCPConnector(
            limit=pool,
            ssl=ssl.create_default_context(cafile=ca_bundle()),
            keepalive_timeout=KEEPALIVE_SECONDS,
        )
        session = aiohttp.ClientSession(
            connector=connector,
            timeout=aiohttp.ClientTimeout(
                total=None, connect=connect_timeout, sock_read=read_timeout
            ),
            auto_decompress=False,
            skip_auto_headers=("Content-Type", "User-Agent"),
            cookie_jar=aiohttp.DummyCookieJar(),
        )
        return cls(client, credentials, session)

    async def call(self, operation: str, parameters: Mapping[str, Any]) -> dict[str, Any]:
        """The decoded 2xx body, or the client's exception for an error response."""
        if operation not in HOT_OPERATIONS:
            raise ValueError(f"{operation} is not sent on the data plane")
        body = encode_body(parameters)
        headers = await self._signed(operation, body)
        try:
            async with self._session.post(
                self._url, data=body, headers=headers, proxy=self._proxy
            ) as response:
                payload = await response.read()
                status = response.status
                received = _headers(response.raw_headers)
        except (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError) as error:
            raise RequestNotSent(type(error).__name__) from error
        except (aiohttp.ClientError, TimeoutError) as error:
            raise ResponseLost(type(error).__name__) from error
        self.calls += 1
        if not checksum_matches(received, payload):
            raise ResponseLost("x-amz-crc32 mismatch")
        if status < 300:
            try:
                decoded: dict[str, Any] = orjson.loads(payload)
            except orjson.JSONDecodeError:
                raise ResponseLost("a 2xx body that is not JSON") from None
            return decoded
        raise parse_error(self.client, operation, status, received, payload)

    async def _signed(self, operation: str, body: bytes) -> dict[str, str]:
        frozen = None
        if self._credentials is not None:
            frozen = await self._credentials.get_frozen_credentials()
        if frozen is None or frozen.access_key is None:
            raise NoCredentialsError()
        headers = self._signer.headers(
            frozen, _CONTENT_TYPE, _TARGET_PREFIX + operation, body, datetime.now(UTC)
        )
        headers["Accept-Encoding"] = "identity"
        return headers

    async def close(self) -> None:
        await self._session.close()
