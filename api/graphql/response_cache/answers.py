"""The response cache at the view: a ticket per cacheable request, the hit's
body and headers, and keeping a miss's answer.

A hit's body is ``{"data": <kept bytes>, "extensions": {"cost": ...}}``: the
cost reported again with the planned cost kept and, for a keyed caller, an
actual cost of no storage call, which is what a hit made. GET answers carry
``ETag`` (over the data's bytes), ``Vary: Authorization`` and a
``Cache-Control`` by caller: ``public, max-age=0, s-maxage=N,
must-revalidate`` for an anonymous one (a CDN may keep it N seconds,
``PROOFGATE_RESPONSE_CACHE_CDN_SECONDS``, and revalidate with
``If-None-Match``); ``private, no-cache`` for a keyed one, whose answer
depends on the key and must never be kept by a shared cache
(docs/design.md, Response cache).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from api.limits.cost_report import cost_extension
from api.wire.json_response import encode_json_bytes
from api.wire.request_json import MalformedJSON, decode_request_json
from services.auth import Principal, Role
from storage.cache import ReadLog, recording
from storage.trace import ContextValue, StorageCall

from .entries import CachedResponse, ResponseCache, ResponseKey
from .requests import CacheableOperations

__all__ = ["ResponseAnswers", "Ticket", "not_modified"]


@dataclass(slots=True)
class Ticket:
    key: ResponseKey
    principal: Principal
    hit: CachedResponse | None
    log: ReadLog = field(default_factory=ReadLog)
    start: int = 0
    response: Mapping[str, Any] | None = None
    """The answer the path built (``process_result``'s), for ``keep``."""
    kept: CachedResponse | None = None


def not_modified(if_none_match: str | None, etag: str) -> bool:
    """``If-None-Match`` lists ``etag`` (weak comparison) or is ``*``."""
    if not if_none_match:
        return False
    for tag in if_none_match.split(","):
        tag = tag.strip()
        if tag == "*" or tag.removeprefix("W/") == etag:
            return True
    return False


class ResponseAnswers:
    def __init__(
        self,
        cache: ResponseCache,
        operations: CacheableOperations,
        *,
        max_cost: int,
        cdn_seconds: int = 0,
    ) -> None:
        self.cache = cache
        self.operations = operations
        self.max_cost = max_cost
        self._public = f"public, max-age=0, s-maxage={cdn_seconds}, must-revalidate".encode()

    def ticket(self, fields: Mapping[str, Any], principal: Principal) -> Ticket | None:
        key = self.operations.key(fields, principal)
        if key is None:
            return None
        return Ticket(key, principal, self.cache.get(key))

    def ticket_of_body(self, body: bytes | None, principal: Principal) -> Ticket | None:
        """A POST's ticket: a JSON object naming a cached operation."""
        try:
            fields = decode_request_json(body or b"")
        except MalformedJSON:
            return None
        return self.ticket(fields, principal) if isinstance(fields, dict) else None

    def ticket_of_query(self, params: Mapping[str, str], principal: Principal) -> Ticket | None:
        """A GET's ticket: its parameters, ``variables`` decoded from JSON."""
        fields: dict[str, Any] = dict(params)
        if "variables" in fields:
            try:
                fields["variables"] = decode_request_json(fields["variables"].encode())
            except MalformedJSON:
                return None
        return self.ticket(fields, principal)

    def recording(self, ticket: Ticket) -> _Recording:
        """Around the path that answers a miss: its reads go to the ticket's
        log, and ``keep`` must run inside."""
        return _Recording(self.cache, ticket)

    def keep(self, ticket: Ticket) -> CachedResponse | None:
        """Keeps the answer the path built, if it is clean data."""
        response = ticket.response
        if response is None or response.get("errors") or response.get("data") is None:
            self.cache.stats.skipped["errors"] += 1
            return None
        cost = (response.get("extensions") or {}).get("cost") or {}
        requested = cost.get("requestedQueryCost")
        data = encode_json_bytes(response["data"])
        ticket.kept = self.cache.put(
            ticket.key,
            data,
            requested if isinstance(requested, int) else None,
            ticket.log,
            ticket.start,
        )
        return ticket.kept

    def body(self, entry: CachedResponse, principal: Principal) -> bytes:
        keyed = principal.role is not Role.ANONYMOUS
        body = entry.bodies.get(keyed)
        if body is None:
            calls: list[StorageCall] | None = [] if keyed else None
            answer = {
                "data": orjson.Fragment(entry.data),
                "extensions": {"cost": cost_extension(entry.cost, self.max_cost, calls)},
            }
            body = entry.bodies[keyed] = orjson.dumps(answer)
        return body

    def headers(self, etag: str, principal: Principal) -> list[tuple[bytes, bytes]]:
        """A GET's caching headers for an answer whose data has ``etag``."""
        control = self._public if principal.role is Role.ANONYMOUS else b"private, no-cache"
        return [
            (b"etag", etag.encode()),
            (b"cache-control", control),
            (b"vary", b"Authorization"),
        ]


class _Recording:
    __slots__ = ("_cache", "_reads", "_ticket")

    def __init__(self, cache: ResponseCache, ticket: Ticket) -> None:
        self._cache, self._ticket = cache, ticket
        self._reads: ContextValue[ReadLog] = recording(ticket.log)

    def __enter__(self) -> Ticket:
        self._ticket.start = self._cache.begin()
        self._reads.__enter__()
        return self._ticket

    def __exit__(self, *exc: object) -> None:
        self._reads.__exit__(*exc)
        self._cache.end()
