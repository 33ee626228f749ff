"""The one place a request's key becomes a principal, for every route.

``/graphql`` (HTTP and WebSocket), ``/mcp`` and ``/metrics`` authenticate
here, so each inherits the same rules (docs/design.md, Limits and cost):

- a wrong key takes a token from its client address's failed-auth bucket,
  and an address out of tokens is refused (429) before its key is read;
  with Redis the buckets are shared by every process (``SharedAuthThrottle``);
- the refusal is an ``error_response``, so its code reaches the request's
  log line and ``proofgate_errors_total`` and it carries the request id;
- the principal is written to the request's observation for its log line.

``POST /ingest`` is signed, not keyed (``services/ingest/signed.py``), but
its failures spend the same bucket through ``failed``.
"""

from __future__ import annotations

import math
from typing import Protocol

from starlette.requests import HTTPConnection
from starlette.responses import Response

from api.observability.observation import OBSERVED
from api.wire.errors import error_response
from domain.errors import ProofgateError, RateLimited, Unauthenticated
from services.auth import ANONYMOUS, KeyCache, Principal, authenticate
from storage import Storage

__all__ = [
    "Authenticator",
    "FailedAuthThrottle",
    "authentication_refusal",
    "client_address",
]


class FailedAuthThrottle(Protocol):
    """``InProcessThrottle`` (``api/limits/auth_throttle.py``), or
    ``SharedAuthThrottle`` through Redis."""

    async def check(self, client: str | None) -> None: ...

    async def failed(self, client: str | None) -> None: ...

    async def close(self) -> None:
        """Its Redis client, when it has one; the app's lifespan calls it."""


def client_address(connection: HTTPConnection) -> str | None:
    return connection.client.host if connection.client else None


class Authenticator:
    def __init__(
        self,
        storage: Storage,
        admin_key_hash: str,
        throttle: FailedAuthThrottle,
        keys: KeyCache | None = None,
    ) -> None:
        """``keys``: the services' cache of API keys (``services/auth.py``)."""
        self.storage = storage
        self.admin_key_hash = admin_key_hash
        self.throttle = throttle
        self.keys = keys

    async def authenticate(self, authorization: str | None, client: str | None) -> Principal:
        """Raises UNAUTHENTICATED for a wrong key, RATE_LIMITED for an
        address out of failures (checked before the key is read, so neither
        the answer nor its timing tells a right key from a wrong one)."""
        if not authorization:  # anonymous, as ``authenticate`` answers it, without its coroutine
            principal = ANONYMOUS
        else:
            await self.throttle.check(client)
            try:
                principal = await authenticate(
                    self.storage, authorization, self.admin_key_hash, self.keys
                )
            except Unauthenticated:
                await self.throttle.failed(client)
                raise
        observation = OBSERVED.get()
        if observation is not None:
            observation.principal = str(principal.role)  # the StrEnum's value, without a call
        return principal

    async def check(self, client: str | None) -> None:
        """RATE_LIMITED while ``client`` has no failures left: for another
        scheme (an ingest signature) before it looks at the credential."""
        await self.throttle.check(client)

    async def failed(self, client: str | None) -> None:
        """A failure another scheme found (a bad ingest signature)."""
        await self.throttle.failed(client)

    async def principal_or_refusal(self, connection: HTTPConnection) -> Principal | Response:
        try:
            return await self.authenticate(
                connection.headers.get("authorization"), client_address(connection)
            )
        except ProofgateError as error:
            return authentication_refusal(error)


def authentication_refusal(error: ProofgateError) -> Response:
    """401, or 429 with ``Retry-After`` for an address out of failures."""
    if not isinstance(error, RateLimited):
        return error_response(error, 401)
    refusal = error_response(error, 429)
    refusal.headers["Retry-After"] = str(math.ceil(error.extensions["retryAfter"]))
    return refusal
