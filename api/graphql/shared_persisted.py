"""Automatic persisted queries shared by every gateway process through Redis.

Each process keeps its bounded LRU (``api.graphql.persisted``); a query registered
on one process is also written to Redis, so a hash-only request that lands
on another process finds it there instead of costing the client a
``PersistedQueryNotFound`` round trip. Redis holds each text for a day at
most and only texts up to ``SHARED_MAX_CHARS``; what comes back from Redis is
hashed again before it runs, so a corrupted or planted entry is never
executed under another query's hash. While Redis is unreachable each process
answers from its own store, as without Redis.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Mapping
from typing import Any

from graphql import GraphQLError
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError
from starlette.websockets import WebSocket

from api.graphql.errors import to_graphql_error
from api.graphql.persisted import NOT_FOUND, PersistedQueries, PersistedQueryStore
from domain.errors import ProofgateError

__all__ = [
    "KEY_PREFIX",
    "SHARED_MAX_CHARS",
    "SHARED_TTL_SECONDS",
    "SharedPersistedQueries",
    "SharedQueries",
]

logger = logging.getLogger("proofgate.limits")

KEY_PREFIX = "apq:"
"""After the deployment's Redis prefix (``PROOFGATE_REDIS_PREFIX``)."""
SHARED_MAX_CHARS = 64 * 1024
SHARED_TTL_SECONDS = 24 * 3600
_TIMEOUT_SECONDS = 0.5


class SharedQueries:
    """The Redis side; one per schema, shared by its requests."""

    def __init__(
        self, url: str, on_outage: Callable[[], None] | None = None, prefix: str = "proofgate:"
    ) -> None:
        self._keys = prefix + KEY_PREFIX
        self._redis = Redis.from_url(
            url,
            retry=Retry(NoBackoff(), 0),
            socket_connect_timeout=_TIMEOUT_SECONDS,
            socket_timeout=_TIMEOUT_SECONDS,
        )
        self._on_outage = on_outage
        self._reachable = True

    async def get(self, digest: str) -> str | None:
        try:
            stored = await self._redis.get(self._keys + digest)
        except (RedisError, OSError) as error:
            self._fall_back(error)
            return None
        self._reachable = True
        if not isinstance(stored, bytes):
            return None
        text = stored.decode(errors="replace")
        return text if hashlib.sha256(text.encode()).hexdigest() == digest else None

    async def put(self, digest: str, query: str) -> None:
        if len(query) > SHARED_MAX_CHARS:
            return
        try:
            await self._redis.set(self._keys + digest, query, ex=SHARED_TTL_SECONDS)
        except (RedisError, OSError) as error:
            self._fall_back(error)
            return
        self._reachable = True

    async def close(self) -> None:
        await self._redis.aclose()

    def _fall_back(self, error: BaseException) -> None:
        if not self._reachable:
            return
        self._reachable = False
        if self._on_outage is not None:
            self._on_outage()
        logger.warning(
            "Redis unreachable (%s: %s); persisted queries are kept per process until it is back",
            type(error).__name__,
            error,
        )


class SharedPersistedQueries(PersistedQueries):
    """``PersistedQueries`` that also asks and tells Redis; Strawberry awaits this hook."""

    def __init__(self, store: PersistedQueryStore, shared: SharedQueries) -> None:
        super().__init__(store)
        self.shared = shared

    async def on_operation(self) -> None:  # type: ignore[override]
        execution_context = self.execution_context
        persisted = (execution_context.operation_extensions or {}).get("persistedQuery")
        context: Any = execution_context.context
        if persisted is not None and not isinstance(getattr(context, "request", None), WebSocket):
            query = given = execution_context.query
            try:
                if query is None and self.store.capacity and isinstance(persisted, Mapping):
                    query = await self._from_redis(persisted)
                execution_context.query = self.store.resolve(query, persisted)
            except ProofgateError as error:
                cause = GraphQLError(error.message, original_error=error)
                raise to_graphql_error(cause, getattr(context, "request_id", None)) from None
            if given is not None and execution_context.query is not None:
                digest = str(persisted.get("sha256Hash", "")).lower()
                await self.shared.put(digest, execution_context.query)

    async def _from_redis(self, persisted: Mapping[str, Any]) -> str | None:
        """The text for a hash this process does not know; None leaves the
        local store to answer (``PersistedQueryNotFound`` if unknown there too)."""
        digest = persisted.get("sha256Hash")
        if not isinstance(digest, str):
            return None
        try:
            return self.store.resolve(None, persisted)
        except ProofgateError as error:
            if error.message != NOT_FOUND:
                raise
        return await self.shared.get(digest.lower())
