"""Automatic persisted queries, Apollo's protocol.

A client sends ``extensions.persistedQuery = {version: 1, sha256Hash}``
without the query; an unknown hash answers ``PersistedQueryNotFound`` (the
message clients match), and the client retries with the query and the hash,
which registers it. Works over POST and GET, so a query's GET URL stays
short enough to cache. Only the text is kept, in a bounded LRU; it is parsed
and checked like any other query every time it runs.
"""

from __future__ import annotations

import hashlib
import re
from collections import OrderedDict
from collections.abc import Mapping

from graphql import GraphQLError
from starlette.websockets import WebSocket
from strawberry.extensions import SchemaExtension

from api.wire.errors import to_graphql_error
from domain.errors import BadUserInput, PersistedQueryNotFound, ProofgateError
from resolvers.context import request_context

__all__ = [
    "NOT_FOUND",
    "NOT_SUPPORTED",
    "STORE_MAX_BYTES",
    "PersistedQueries",
    "PersistedQueryStore",
]

NOT_FOUND = "PersistedQueryNotFound"
NOT_SUPPORTED = "PersistedQueryNotSupported"
STORE_MAX_BYTES = 16 * 1024 * 1024
"""UTF-8 bytes, not characters: a character may take four."""
_SHA256 = re.compile(r"[0-9a-f]{64}")


class PersistedQueryStore:
    """Query texts by their SHA-256, the ``capacity`` most recently used and
    at most ``max_bytes`` UTF-8 bytes in all: one query may be a whole request
    body of comments, so a count alone would not bound the memory, and a count
    of characters would let four-byte characters keep four times the bound."""

    def __init__(self, capacity: int, *, max_bytes: int = STORE_MAX_BYTES) -> None:
        self.capacity = capacity
        self.max_bytes = max_bytes
        self._queries: OrderedDict[str, tuple[str, int]] = OrderedDict()
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._queries)

    def resolve(self, query: str | None, persisted: object) -> str:
        """The query to run for a request carrying ``extensions.persistedQuery``."""
        if self.capacity == 0:
            raise BadUserInput(
                NOT_SUPPORTED, hint="Send the query itself; this server keeps no persisted queries."
            )
        if not isinstance(persisted, Mapping) or persisted.get("version") != 1:
            raise BadUserInput("Unsupported persistedQuery", hint="Send {version: 1, sha256Hash}.")
        digest = persisted.get("sha256Hash")
        if not isinstance(digest, str) or not _SHA256.fullmatch(digest.lower()):
            raise BadUserInput("persistedQuery.sha256Hash must be 64 hexadecimal digits")
        digest = digest.lower()
        if query is None:
            stored = self._queries.get(digest)
            if stored is None:
                raise PersistedQueryNotFound(
                    NOT_FOUND, hint="Send the query with its hash to register it."
                )
            self._queries.move_to_end(digest)
            return stored[0]
        encoded = query.encode()
        if hashlib.sha256(encoded).hexdigest() != digest:
            raise BadUserInput(
                "provided sha does not match query",
                hint="sha256Hash is the lowercase hex SHA-256 of the query's UTF-8 bytes.",
            )
        size = len(encoded)
        if digest not in self._queries and size <= self.max_bytes:
            self._queries[digest] = (query, size)
            self._bytes += size
            while len(self._queries) > self.capacity or self._bytes > self.max_bytes:
                self._bytes -= self._queries.popitem(last=False)[1][1]
        return query


class PersistedQueries(SchemaExtension):
    """Swaps a hash for its query before Strawberry looks for one.

    It runs first, in ``on_operation``: a refusal here is raised already
    mapped (nothing else has started, and Strawberry would otherwise need a
    query to report anything). WebSocket messages carry their query, so
    they are left alone.
    """

    def __init__(self, store: PersistedQueryStore) -> None:
        self.store = store

    def on_operation(self) -> None:  # type: ignore[override]
        execution_context = self.execution_context
        persisted = (execution_context.operation_extensions or {}).get("persistedQuery")
        context = request_context(execution_context.context)
        request_id = context.request_id if context is not None else None
        over_socket = context is not None and isinstance(context.request, WebSocket)
        if persisted is not None and not over_socket:
            try:
                execution_context.query = self.store.resolve(execution_context.query, persisted)
            except ProofgateError as error:
                cause = GraphQLError(error.message, original_error=error)
                raise to_graphql_error(cause, request_id) from None
