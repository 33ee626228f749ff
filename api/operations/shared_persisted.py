"""Automatic persisted queries shared by every gateway process through Redis.

Each process keeps its bounded LRU (``api.operations.persisted``); a query registered
on one process is also written to Redis, so a hash-only request that lands
on another process finds it there instead of costing the client a
``PersistedQueryNotFound`` round trip.

What Redis holds is bounded, whoever sends the texts
(docs/design.md, "Alerts across processes"): a text is written only once
its operation parsed, validated and passed the trusted-documents check (a
document refused anywhere is never written), each text for a day at most
and only up to ``SHARED_MAX_QUERY_BYTES``, and ``REGISTER`` keeps at most
``SHARED_MAX_ENTRIES`` texts and ``SHARED_MAX_BYTES`` in all, dropping the
oldest registrations first. What comes back from Redis is hashed again
before it runs, so a corrupted or planted entry is never executed under
another query's hash. While Redis is unreachable each process answers from
its own store, as without Redis.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

from graphql import GraphQLError
from redis.exceptions import RedisError
from starlette.websockets import WebSocket

from api.limits.shared_ratelimit import redis_client
from api.operations.persisted import NOT_FOUND, PersistedQueries, PersistedQueryStore
from api.wire.errors import to_graphql_error
from domain.errors import ProofgateError
from resolvers.context import request_context

__all__ = [
    "KEY_PREFIX",
    "REGISTER",
    "SHARED_MAX_BYTES",
    "SHARED_MAX_ENTRIES",
    "SHARED_MAX_QUERY_BYTES",
    "SHARED_TTL_SECONDS",
    "SharedPersistedQueries",
    "SharedQueries",
]

logger = logging.getLogger("proofgate.limits")

KEY_PREFIX = "apq:"
"""After the deployment's Redis prefix (``PROOFGATE_REDIS_PREFIX``)."""
SHARED_MAX_QUERY_BYTES = 64 * 1024
SHARED_TTL_SECONDS = 24 * 3600
SHARED_MAX_ENTRIES = 5_000
SHARED_MAX_BYTES = 4 * 1024 * 1024
INDEX_KEY = "apq-index"
SIZES_KEY = "apq-sizes"
BYTES_KEY = "apq-bytes"
"""After the Redis prefix: registrations by time (a sorted set), each
text's size (a hash) and their total, which ``REGISTER`` keeps in step."""

REGISTER = """
local text, digest, prefix = ARGV[1], ARGV[2], ARGV[3]
local ttl, now = tonumber(ARGV[4]), tonumber(ARGV[5])
local max_entries, max_bytes = tonumber(ARGV[6]), tonumber(ARGV[7])
local function drop(member)
    local size = tonumber(redis.call('HGET', KEYS[3], member) or '0')
    redis.call('HDEL', KEYS[3], member)
    redis.call('ZREM', KEYS[2], member)
    redis.call('DEL', prefix .. member)
    redis.call('DECRBY', KEYS[4], size)
end
for _, member in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now - ttl)) do
    drop(member)
end
if redis.call('HEXISTS', KEYS[3], digest) == 1 then
    redis.call('EXPIRE', KEYS[1], ttl)
    redis.call('ZADD', KEYS[2], now, digest)
    return 0
end
local size = string.len(text)
while redis.call('ZCARD', KEYS[2]) >= max_entries
    or tonumber(redis.call('GET', KEYS[4]) or '0') + size > max_bytes do
    local oldest = redis.call('ZRANGE', KEYS[2], 0, 0)
    if #oldest == 0 then break end
    drop(oldest[1])
end
redis.call('SET', KEYS[1], text, 'EX', ttl)
redis.call('ZADD', KEYS[2], now, digest)
redis.call('HSET', KEYS[3], digest, size)
redis.call('INCRBY', KEYS[4], size)
return 1
"""
"""KEYS: the text's key, the index, the sizes, the total; ARGV: text,
digest, key prefix, TTL, now (seconds), the entry and byte bounds."""


class SharedQueries:
    """The Redis side; one per schema, shared by its requests."""

    def __init__(
        self,
        url: str,
        on_outage: Callable[[], None] | None = None,
        prefix: str = "proofgate:",
        *,
        max_entries: int = SHARED_MAX_ENTRIES,
        max_bytes: int = SHARED_MAX_BYTES,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._prefix = prefix
        self._keys = prefix + KEY_PREFIX
        self._redis = redis_client(url)
        self._register = self._redis.register_script(REGISTER)
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._clock = clock
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
        if len(query.encode()) > SHARED_MAX_QUERY_BYTES:
            return
        prefix = self._prefix
        try:
            await self._register(
                keys=[
                    self._keys + digest,
                    prefix + INDEX_KEY,
                    prefix + SIZES_KEY,
                    prefix + BYTES_KEY,
                ],
                args=[
                    query,
                    digest,
                    self._keys,
                    SHARED_TTL_SECONDS,
                    repr(self._clock()),
                    self.max_entries,
                    self.max_bytes,
                ],
            )
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

    async def on_operation(self) -> AsyncIterator[None]:  # type: ignore[override]
        """Registers a new text in Redis after the operation, and only if it
        parsed, validated and passed the trusted-documents check."""
        execution_context = self.execution_context
        persisted = (execution_context.operation_extensions or {}).get("persistedQuery")
        context = request_context(execution_context.context)
        request_id = context.request_id if context is not None else None
        if persisted is None or (context is not None and isinstance(context.request, WebSocket)):
            yield
            return
        query = given = execution_context.query
        try:
            if query is None and self.store.capacity and isinstance(persisted, Mapping):
                query = await self._from_redis(persisted)
            execution_context.query = self.store.resolve(query, persisted)
        except ProofgateError as error:
            cause = GraphQLError(error.message, original_error=error)
            raise to_graphql_error(cause, request_id) from None
        yield
        if (
            given is not None
            and execution_context.graphql_document is not None
            and not execution_context.pre_execution_errors
        ):
            digest = str(persisted.get("sha256Hash", "")).lower()
            await self.shared.put(digest, given)

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
