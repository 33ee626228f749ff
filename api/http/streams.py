"""Subscriptions over HTTP: multipart (Apollo's) and SSE (graphql-sse), as connections.

Strawberry parses the request and frames the parts (``strawberry.http.streaming``);
what it does not know is that a stream here is a connection like a WebSocket
(docs/design.md, Subscriptions over HTTP): it is registered with the same
``Connections`` while it is open, so the key watcher ends it when its key is
revoked, shutdown ends it, and a subscription that falls too far behind ends
it with a reason rather than lose alerts; its heartbeats come from the one
keep-alive task every connection shares rather than from a task of its own.
Over SSE every alert's event carries the alert's cursor as ``id:``, and a
client reconnecting with ``Last-Event-ID`` resumes after it (``threatAlerts``
replays from a cursor with no gap and no repeat at the seam).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from strawberry.http.streaming import HTTPStreamTransport, SSETransport

from api.ws.connections import CLOSE_GOING_AWAY, CLOSE_REVOKED, CLOSE_SLOW_CONSUMER, LiveConnection
from resolvers.context import RequestContext

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from api.ws.connections import Connections

__all__ = [
    "STREAM_SCOPE_KEY",
    "EventStream",
    "HTTPStream",
    "StreamContext",
    "open_stream",
    "stream_response",
]

logger = logging.getLogger("proofgate.streams")

STREAM_SCOPE_KEY = "proofgate.stream"
_WAITING = 4
"""Parts waiting to be written: one encoded result and a heartbeat, or the
closing error, ``complete`` and the end; the subscription waits for room."""
_CLOSE_CODES = {
    CLOSE_REVOKED[0]: "UNAUTHENTICATED",
    CLOSE_SLOW_CONSUMER[0]: "SLOW_CONSUMER",
    CLOSE_GOING_AWAY[0]: "SERVICE_UNAVAILABLE",
}
_LAST_EVENT_ID_BYTES = 1024


class EventStream(SSETransport):
    """graphql-sse's events with ``\n`` line ends, which every SSE parser
    splits (urql's looks for ``\n\n`` between events, and read nothing from
    Strawberry's ``\r\n``); the format allows either (docs/design.md,
    Browser clients)."""

    def encode_event(self, event: str, data: str | None = None) -> str:
        if data and ("\r" in data or "\n" in data):
            raise ValueError("SSE event data must not contain newlines")
        return f"event: {event}\ndata: {data or ''}\n\n"

    def encode_comment(self, comment: str) -> str:
        return f": {comment}\n\n"


@dataclass
class StreamContext(RequestContext):
    """The context of a streamed HTTP operation: its connection, for the
    subscription to end on overflow, and for SSE its event ids."""

    connection: LiveConnection | None = field(default=None, repr=False)
    event_ids: HTTPStream | None = field(default=None, repr=False)
    """The stream, over SSE only: the one transport whose events carry ids."""
    stream: HTTPStream | None = field(default=None, repr=False)


class HTTPStream:
    """One streamed response body: results in order, heartbeats between them,
    and a last error part when the gateway ends it (``close``)."""

    def __init__(
        self,
        transport: HTTPStreamTransport,
        encode: Callable[[object], str],
        last_event_id: str | None = None,
    ) -> None:
        self.transport = transport
        self.encode = encode
        self.last_event_id = last_event_id
        """The ``Last-Event-ID`` a reconnecting SSE client sent: ``threatAlerts``
        resumes after it."""
        self._next_id: str | None = None
        self._parts: asyncio.Queue[str | None] = asyncio.Queue(maxsize=_WAITING)
        self._pump: asyncio.Task[None] | None = None
        self._closed = False

    def event_id(self, cursor: str) -> None:
        """The cursor of the alert the subscription is about to send."""
        self._next_id = cursor

    async def heartbeat(self) -> None:
        """From ``Connections.keep_alive``: only when nothing waits to be
        written, which already tells proxies the stream is alive."""
        if not self._closed and self._parts.empty():
            self._parts.put_nowait(self.transport.heartbeat_message(self.encode))

    async def close(self, code: int, reason: str) -> None:
        """Ends the stream with an error part saying why, then ``complete``;
        ``LiveConnection`` calls this as it would close a WebSocket."""
        if self._closed:
            return
        self._closed = True
        logger.info("Closing an HTTP stream (%d %s)", code, reason)
        if self._pump is not None:
            self._pump.cancel()
        while not self._parts.empty():
            self._parts.get_nowait()
        error = {"message": reason, "extensions": {"code": _CLOSE_CODES.get(code, "CLOSED")}}
        self._parts.put_nowait(self._error_part(error))
        self._parts.put_nowait(self.transport.encode_complete())
        self._parts.put_nowait(None)

    async def body(
        self, results: AsyncIterator[Any], encode_result: Callable[[Any], Any]
    ) -> AsyncIterator[str]:
        """The response body; ``encode_result`` makes a result the response
        dict (the view's ``process_result``). Leaving it, for whatever reason
        (the client went away, the stream ended), ends the subscription."""
        self._pump = asyncio.get_running_loop().create_task(self._run(results, encode_result))
        try:
            if self.transport.send_initial_heartbeat:
                yield self.transport.heartbeat_message(self.encode)
            while (part := await self._parts.get()) is not None:
                yield part
        finally:
            self._closed = True
            self._pump.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._pump
            aclose = getattr(results, "aclose", None)
            if aclose is not None:
                with contextlib.suppress(Exception):
                    await aclose()

    async def _run(self, results: AsyncIterator[Any], encode_result: Callable[[Any], Any]) -> None:
        try:
            async for result in results:
                response = await encode_result(result)
                await self._parts.put(self._next_part(response))
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("An HTTP stream failed")
            await self._parts.put(self._error_part({"message": "Internal server error"}))
        await self._parts.put(self.transport.encode_complete())
        await self._parts.put(None)

    def _next_part(self, response: Any) -> str:
        part = self.transport.encode_next(response, self.encode)
        event_id, self._next_id = self._next_id, None
        if event_id is not None and isinstance(self.transport, SSETransport):
            return f"id: {event_id}\n{part}"
        return part

    def _error_part(self, error: dict[str, Any]) -> str:
        """graphql-sse: a ``next`` event with the error; Apollo's multipart
        protocol: a transport error, ``{"payload": null, "errors": [...]}``."""
        if isinstance(self.transport, SSETransport):
            return self.transport.encode_next({"errors": [error]}, self.encode)
        return self.transport.encode_multipart_data(  # type: ignore[attr-defined,no-any-return]
            {"payload": None, "errors": [error]}, self.encode
        )


def open_stream(
    transport: HTTPStreamTransport,
    encode: Callable[[object], str],
    context: StreamContext,
    request: Request,
) -> HTTPStream:
    """The stream a request that asked for one will be answered on, tied to
    its context (before the operation runs, so the subscription finds it)."""
    last_event_id = None
    if isinstance(transport, SSETransport):
        last_event_id = request.headers.get("last-event-id") or None
        if last_event_id is not None and len(last_event_id) > _LAST_EVENT_ID_BYTES:
            last_event_id = None
    stream = HTTPStream(transport, encode, last_event_id)
    context.connection = LiveConnection(stream, context, stream.heartbeat)
    context.event_ids = stream if isinstance(transport, SSETransport) else None
    context.stream = stream
    request.scope[STREAM_SCOPE_KEY] = context
    return stream


async def stream_response(
    connections: Connections,
    request: Request,
    results: AsyncIterator[Any],
    encode_result: Callable[[Any], Any],
    respond: Callable[..., Any],
    sub_response: Response,
) -> Response:
    """The streaming response for ``results``, registered in ``connections``
    while the body is being written. ``respond``: the view's
    ``create_streaming_response``."""
    context: StreamContext = request.scope[STREAM_SCOPE_KEY]
    connection, stream = context.connection, context.stream
    assert connection is not None and stream is not None

    async def body() -> AsyncIterator[str]:
        connections.add(connection)
        try:
            async for part in stream.body(results, encode_result):
                yield part
        finally:
            connections.discard(connection)

    response: Response = await respond(
        request, body, sub_response, headers=stream.transport.headers
    )
    return response
