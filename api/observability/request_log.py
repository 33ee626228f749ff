"""One log line and one set of metrics per HTTP request.

The middleware gives every request its id (the client's ``X-Request-Id`` when
it sends a plain one, else a new one), answers it in ``X-Request-Id``, and when
the response is done writes the request's line (at INFO for ``/graphql`` and
every route in ``OBSERVED_ROUTES``, at DEBUG for probes and static files):
the same id the client finds in ``extensions.requestId`` of an error, so one grep finds both.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Awaitable, Iterator
from typing import Any

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from strawberry.extensions import SchemaExtension

from api.observability.log_lines import RequestLines
from api.observability.metrics import Metrics
from api.observability.observation import (
    OBSERVED,
    REQUEST_ID_HEADER,
    Observation,
    observing,
    request_id_from,
)
from resolvers.context import request_context
from services.auth import Principal
from storage.trace import Trace, accounting

__all__ = ["REQUEST_ID_SCOPE_KEY", "OperationObserver", "RequestObserver", "record_operation"]

REQUEST_ID_SCOPE_KEY = "proofgate.request_id"
GRAPHQL_PATH = "/graphql"
OBSERVED_ROUTES = frozenset({"/mcp", "/ingest", "/dpp", "/qr", "/verify", "/01"})

logger = logging.getLogger("proofgate.request")
_lines = RequestLines(logger)


class RequestObserver:
    def __init__(self, app: ASGIApp, *, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        """Returns the inner app's awaitable for what it does not handle rather
        than awaiting it: a WebSocket lives for hours, and a frame per
        middleware per connection is memory an idle subscription keeps
        (docs/design.md, Alert fan-out)."""
        if scope["type"] != "http":
            return self.app(scope, receive, send)
        return self._observe(scope, receive, send)

    async def _observe(self, scope: Scope, receive: Receive, send: Send) -> None:
        incoming = Headers(scope=scope).get(REQUEST_ID_HEADER)
        await self.observe(scope, receive, send, self.app, incoming)

    async def observe(
        self, scope: Scope, receive: Receive, send: Send, app: ASGIApp, incoming: str | None
    ) -> None:
        """``app`` observed, the request's id taken from ``incoming`` (its
        ``X-Request-Id``) when plain; ``GraphQLEntry`` (``api/graphql/entry.py``)
        calls it with the header it read in its one pass."""
        observation = Observation(request_id_from(incoming))
        scope[REQUEST_ID_SCOPE_KEY] = observation.request_id
        header = (REQUEST_ID_HEADER.encode(), observation.request_id.encode())
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", ()), header]
            await send(message)

        started = time.perf_counter()
        try:
            with observing(observation), accounting(observation.storage):
                await app(scope, receive, send_with_id)
        finally:
            self.record(scope, observation, status, time.perf_counter() - started)

    def record(self, scope: Scope, observation: Observation, status: int, seconds: float) -> None:
        """The request's metrics and log line, once it is answered."""
        path = scope["path"]
        route = GRAPHQL_PATH if path == GRAPHQL_PATH else observed_route(path)
        if route == GRAPHQL_PATH:
            self.metrics.observe(observation, status, seconds)
        elif route is not None:
            self.metrics.observe_route(route, observation, status, seconds)
        level = logging.DEBUG if route is None else logging.INFO
        if logger.isEnabledFor(level):
            _lines.write(level, RequestFields(scope, status, seconds, observation))


def observed_route(path: str) -> str | None:
    """The route a request's line and metrics are filed under, from a closed
    set: every route that authenticates or builds a body from stored data.
    None for probes, the scrape and static files, which are logged at DEBUG."""
    if path == GRAPHQL_PATH:
        return GRAPHQL_PATH
    prefix = "/" + path[1:].partition("/")[0]
    return prefix if prefix in OBSERVED_ROUTES else None


def _fields(scope: Scope, status: int, seconds: float, observation: Observation) -> dict[str, Any]:
    storage = observation.storage
    return {
        "requestId": observation.request_id,
        "method": scope["method"],
        "path": scope["path"],
        "status": status,
        "durationMs": round(seconds * 1000, 2),
        "operationName": observation.operation_name,
        "operationType": observation.operation_type,
        "principal": observation.principal,
        "errorCodes": observation.error_codes,
        "storageCalls": storage.storage_calls,
        "capacityUnits": round(storage.capacity, 2),
    }


class RequestFields:
    """A request's log fields (``LineFields``): its text form written in one
    f-string, as ``log_lines`` writes the dict's (``key=value`` for each, in
    order), which ``tests/api/observability/test_request_log.py`` holds it to."""

    __slots__ = ("observation", "scope", "seconds", "status")

    def __init__(self, scope: Scope, status: int, seconds: float, observation: Observation):
        self.scope = scope
        self.status = status
        self.seconds = seconds
        self.observation = observation

    def as_dict(self) -> dict[str, Any]:
        return _fields(self.scope, self.status, self.seconds, self.observation)

    def pairs(self) -> str:
        observation, scope = self.observation, self.scope
        storage = observation.storage
        # ``str(round(seconds * 1000, 2))`` for a duration under a year: both
        # round the exact binary value to two decimals (half to even), and
        # ``repr`` of such a float is those digits without trailing zeros, one
        # kept after the point. One conversion instead of three.
        milliseconds = self.seconds * 1000
        if 0 <= milliseconds < 1e12:
            duration = f"{milliseconds:.2f}".rstrip("0")
            if duration[-1] == ".":
                duration += "0"
        else:
            duration = str(round(milliseconds, 2))
        # No errors: the empty list's text without ``repr``'s call.
        return (
            f" requestId={observation.request_id} method={scope['method']}"
            f" path={scope['path']} status={self.status} durationMs={duration}"
            f" operationName={observation.operation_name}"
            f" operationType={observation.operation_type}"
            f" principal={observation.principal} errorCodes={observation.error_codes or '[]'}"
            f"{_storage_pairs(storage) if storage.calls else _NO_CALLS}"
        )


def _storage_pairs(storage: Trace) -> str:
    return f" storageCalls={len(storage.calls)} capacityUnits={round(storage.capacity, 2)}"


_NO_CALLS = " storageCalls=0 capacityUnits=0"
"""A request that read nothing: its capacity is ``sum`` of nothing, the int 0."""


class OperationObserver(SchemaExtension):
    """Tells the request's observation which operation ran, and for whom."""

    def on_operation(self) -> Iterator[None]:
        yield
        context = self.execution_context
        operation_type = None
        if context.graphql_document is not None:
            with contextlib.suppress(RuntimeError):  # no operation of that name
                operation_type = context.operation_type.value
        request = request_context(context.context)
        principal = request.principal if request is not None else None
        record_operation(context.operation_name, operation_type, principal)


def record_operation(name: object, operation_type: str | None, principal: Principal | None) -> None:
    """Tells the request's observation which operation ran, and for whom."""
    observation = OBSERVED.get()
    if observation is None:
        return
    # A body may carry any JSON as operationName; only a string names an operation.
    observation.operation_name = name if isinstance(name, str) else None
    if operation_type is not None:
        observation.operation_type = operation_type
    if principal is not None:
        observation.principal = str(principal.role)  # the StrEnum's value, without a call
