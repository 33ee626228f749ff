"""POST /graphql in one ASGI callable: what the middleware stack does for it.

Nearly every request is a POST to ``/graphql``, and on its way to the view it
passed six layers (Starlette's error middleware, the WebSocket bypass, CORS,
the request observer, the HTTP guard, Starlette's exception middleware and
router), each a coroutine frame, most parsing the headers again. Here one
pass over the headers reads what they all need (content type, length, the
CSRF headers, the request id, the origin) and the same functions run in the
same order: CORS's response headers, the observer (request id, log line,
metrics), the guard (CSRF, size, the body read once), the route's scope keys,
the view, and a 500 for an exception before the response started, re-raised
for the server to log, as Starlette's error middleware does.

The common request (JSON, no ``Origin``, no trace header, no stream in its
``Accept``) goes further in one coroutine (``_direct``): its observation and
the guard's checks inline, the view's ``answer_post`` for authentication and
the prepared lane, and a prepared answer sent as one ``http.response.start``
with every header (the request id included) and one body, the headers
Starlette's ``Response`` writes, in its order, as the media type and with the
status ``api/graphql/negotiation.py`` gives the full path's answer. Anything else on the way
(a refusal, a declined lane) is answered through the same functions as the
stack, with the request id added to its headers.

Not for a request with spans on (their middleware sits between the observer
and the guard) or a ``root_path`` (the router strips it): those take the
stack. ``tests/api/graphql/test_entry.py`` sends the suite's operations
both ways and compares status, headers, body and log line, and a fault
planted in the entry must fail it.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable
from functools import partial
from types import MethodType
from typing import Any

from starlette.datastructures import Headers
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.graphql.incremental import STREAMING_ACCEPTS
from api.graphql.negotiation import APPLICATION_JSON, json_media_type
from api.graphql.view import GraphQLApp
from api.http.guard import BODY_SCOPE_KEY, PREFLIGHT_HEADERS, HTTPGuard, media_type_of, refuse
from api.observability.fallbacks import fell_back
from api.observability.observation import (
    OBSERVED,
    REQUEST_ID_HEADER,
    Observation,
    new_request_id,
    request_id_from,
)
from api.observability.request_log import REQUEST_ID_SCOPE_KEY, RequestObserver
from api.runtime.direct_answer import ANSWERS_AT_ONCE, DirectAnswer
from api.settings.limits import Lane
from storage.trace import ACCOUNTS

__all__ = ["GraphQLEntry"]

_CONTENT_TYPE = b"content-type"
_CONTENT_LENGTH = b"content-length"
_REQUEST_ID = REQUEST_ID_HEADER.encode()
_ID_HEADER = REQUEST_ID_HEADER.encode()
"""The response's header; ``_REQUEST_ID`` is the request's, read in the one pass."""
_PREFLIGHT = frozenset(h.encode() for h in PREFLIGHT_HEADERS)
_ORIGIN = b"origin"
_ACCEPT = b"accept"
_AUTHORIZATION = b"authorization"
_TRACE = b"x-proofgate-trace"
_JSON = b"application/json"
_VARY = (b"vary", b"Origin")
_NO_HEADERS = Headers(raw=[])
"""A request's headers as CORS reads them on the direct path: no ``Origin``."""
_STREAMING = tuple(accept.encode() for accept in STREAMING_ACCEPTS)


class GraphQLEntry:
    def __init__(
        self,
        app: Any,
        endpoint: ASGIApp,
        *,
        observer: RequestObserver,
        max_bytes: int,
        cors: CORSMiddleware | None,
        path: str = "/graphql",
    ) -> None:
        """``app``: the Starlette app whose scope keys the route sets;
        ``endpoint``: the route's endpoint; ``cors``: a CORS middleware with
        the stack's settings, for its response headers, or None without origins."""
        self.app = app
        self.endpoint = endpoint
        self.observer = observer
        self.guard = HTTPGuard(self._routed, max_bytes=max_bytes, path=path)
        self.cors = cors
        self.path = path
        self.graphql: GraphQLApp | None = None
        """``app.state.graphql``, set by the lifespan when it makes it: read
        here without ``State``'s ``__getattr__``, which raised and caught an
        AttributeError on every request (~5,500 instructions)."""

    def takes(self, scope: Scope) -> bool:
        return (
            scope["type"] == "http"
            and scope["method"] == "POST"
            and scope["path"] == self.path
            and not scope.get("root_path")
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        content_type: bytes | None = None
        length: bytes | None = None
        incoming: bytes | None = None
        authorization: bytes | None = None
        accept: bytes | None = None
        preflighted = False
        layered: str | None = None  # why the stack's functions answer, not ``_direct``
        for name, value in scope["headers"]:
            # As Headers(scope=...).get: the first of a repeated name counts.
            if name == _CONTENT_TYPE:
                content_type = value if content_type is None else content_type
            elif name == _CONTENT_LENGTH:
                length = value if length is None else length
            elif name == _REQUEST_ID:
                incoming = value if incoming is None else incoming
            elif name == _AUTHORIZATION:
                authorization = value if authorization is None else authorization
            elif name in _PREFLIGHT:
                preflighted = True
            elif name == _ORIGIN:
                if self.cors is not None:  # CORS writes its headers
                    layered = "origin with CORS"
            elif name == _ACCEPT:
                accept = value if accept is None else accept
                if _streaming(value):  # negotiated by the view
                    layered = "streaming accept"
            elif name == _TRACE:
                layered = "trace header"
        scope["app"] = self.app
        # Before start-up completes there is none: the stack answers as it did.
        graphql = self.graphql
        if layered is None and content_type != _JSON:
            layered = "content type not exactly application/json"
        # An exact type test: ``isinstance`` against Strawberry's ABC costs more.
        if layered is None and type(graphql) is GraphQLApp:
            reply = _Reply(send, self.cors)
            try:
                await self._direct(
                    scope, receive, reply, graphql, incoming, length, authorization, accept
                )
            except Exception:
                if not reply.started:
                    await PlainTextResponse("Internal Server Error", status_code=500)(
                        scope, receive, send
                    )
                raise
            return
        fell_back(Lane.ENTRY, layered or "not started")
        await self._layered(scope, receive, send, content_type, length, incoming, preflighted)

    async def _layered(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        content_type: bytes | None,
        length: bytes | None,
        incoming: bytes | None,
        preflighted: bool,
    ) -> None:
        """The stack's functions, one after another, for every other request."""
        started = False

        async def watched(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self._observed(
                scope, receive, watched, content_type, length, incoming, preflighted
            )
        except Exception:
            if not started:
                await PlainTextResponse("Internal Server Error", status_code=500)(
                    scope, receive, send
                )
            raise

    def _observed(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        content_type: bytes | None,
        length: bytes | None,
        incoming: bytes | None,
        preflighted: bool,
    ) -> Awaitable[None]:
        if self.cors is not None:
            send = partial(self.cors.send, send=send, request_headers=Headers(scope=scope))
        guarded = partial(
            self.guard.guard,
            media_type=media_type_of(_text(content_type) or ""),
            preflighted=preflighted,
            declared=_text(length),
        )
        return self.observer.observe(scope, receive, send, guarded, _text(incoming))

    async def _direct(
        self,
        scope: Scope,
        receive: Receive,
        reply: _Reply,
        graphql: GraphQLApp,
        incoming: bytes | None,
        length: bytes | None,
        authorization: bytes | None,
        accept: bytes | None,
    ) -> None:
        """The observer's work around the guard's and the view's, inline."""
        # No id sent (the common case): a new one, without two calls on the way.
        observation = Observation(
            new_request_id() if incoming is None else request_id_from(_text(incoming))
        )
        request_id = scope[REQUEST_ID_SCOPE_KEY] = observation.request_id
        reply.header = (_ID_HEADER, request_id.encode())
        started = time.perf_counter()
        # ``observing`` and ``accounting`` without their objects and calls.
        observed = OBSERVED.set(observation)
        accounted = ACCOUNTS.set(observation.storage)
        try:
            await self._answer(scope, receive, reply, graphql, length, authorization, accept)
        finally:
            ACCOUNTS.reset(accounted)
            OBSERVED.reset(observed)
            self.observer.record(scope, observation, reply.status, time.perf_counter() - started)

    async def _answer(
        self,
        scope: Scope,
        receive: Receive,
        reply: _Reply,
        graphql: GraphQLApp,
        length: bytes | None,
        authorization: bytes | None,
        accept: bytes | None,
    ) -> None:
        guard = self.guard
        refusal = guard.refusal("application/json", False, _text(length) or "")
        if refusal is not None:
            await refuse(scope, receive, reply.send, *refusal)
            return
        body = await guard.read(receive)
        if body is None:
            await refuse(scope, receive, reply.send, guard.too_large(), 413)
            return
        scope[BODY_SCOPE_KEY] = body
        self._route(scope)
        # No stream listed: a JSON type, the one the full path would answer as.
        media_type = json_media_type(_text(accept)) or APPLICATION_JSON
        answer = await graphql.answer_post(
            scope, receive, reply.send, body, _text(authorization), media_type
        )
        if answer is not None:
            await reply.json(*answer, media_type.encode())

    def _routed(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        self._route(scope)
        return self.endpoint(scope, receive, send)

    def _route(self, scope: Scope) -> None:
        """The keys Starlette's router sets for the ``/graphql`` route."""
        scope["router"] = self.app.router
        scope["endpoint"] = self.endpoint
        scope["path_params"] = {}


class _Reply:
    """The response of a request on the direct path: a prepared answer sent
    in two messages with all its headers, anything else through ``send``
    with the request id added, as the observer adds it, and CORS's ``Vary``
    for a request without an ``Origin``; and its status, for the log line and
    the metrics (500 until one is sent)."""

    __slots__ = ("_send", "cors", "header", "started", "status")

    def __init__(self, send: Send, cors: CORSMiddleware | None) -> None:
        self._send = send
        self.cors = cors
        self.header: tuple[bytes, bytes] = (b"", b"")
        self.started = False
        self.status = 500

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.started = True
            self.status = message["status"]
            message["headers"] = [*message.get("headers", ()), self.header]
        if self.cors is not None:
            await self.cors.send(message, send=self._send, request_headers=_NO_HEADERS)
        else:
            await self._send(message)

    async def json(self, status: int, body: bytes, media_type: bytes) -> None:
        """A JSON body, headed as Starlette's ``Response`` heads it."""
        self.started = True
        self.status = status
        headers = [
            (_CONTENT_LENGTH, str(len(body)).encode()),
            (_CONTENT_TYPE, media_type),
            self.header,
        ]
        if self.cors is not None:
            headers.append(_VARY)  # as CORSMiddleware.send, to a response without one
        send: Any = self._send
        # The server's lean cycle takes both at once (api/runtime/direct_answer.py).
        owner = send.__self__ if type(send) is MethodType else None
        if type(owner) in ANSWERS_AT_ONCE:
            cycle: DirectAnswer = owner  # type: ignore[assignment]
            pending = cycle.answer(status, headers, body)
            if pending is not None:
                await pending
            return
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _text(value: bytes | None) -> str | None:
    return None if value is None else value.decode("latin-1")


def _streaming(accept: bytes) -> bool:
    """As ``asks_for_parts``: an ``Accept`` the full path answers in parts or events."""
    return any(kind in accept for kind in _STREAMING)
