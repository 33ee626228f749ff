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

Not for a request with spans on (their middleware sits between the observer
and the guard) or a ``root_path`` (the router strips it): those take the
stack. ``tests/api/http/test_graphql_entry.py`` sends the suite's operations
both ways and compares status, headers, body and log line, and a fault
planted in the entry must fail it.
"""

from __future__ import annotations

from collections.abc import Awaitable
from functools import partial
from typing import Any

from starlette.datastructures import Headers
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.http.guard import PREFLIGHT_HEADERS, HTTPGuard, media_type_of
from api.observability.observation import REQUEST_ID_HEADER
from api.observability.request_log import RequestObserver

__all__ = ["GraphQLEntry"]

_CONTENT_TYPE = b"content-type"
_CONTENT_LENGTH = b"content-length"
_REQUEST_ID = REQUEST_ID_HEADER.encode()
_PREFLIGHT = frozenset(h.encode() for h in PREFLIGHT_HEADERS)


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

    def takes(self, scope: Scope) -> bool:
        return (
            scope["type"] == "http"
            and scope["method"] == "POST"
            and scope["path"] == self.path
            and not scope.get("root_path")
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def watched(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        scope["app"] = self.app
        try:
            await self._observed(scope, receive, watched)
        except Exception:
            if not started:
                await PlainTextResponse("Internal Server Error", status_code=500)(
                    scope, receive, send
                )
            raise

    def _observed(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        content_type: str | None = None
        length: str | None = None
        incoming: str | None = None
        preflighted = False
        for name, value in scope["headers"]:
            # As Headers(scope=...).get: the first of a repeated name counts.
            if name == _CONTENT_TYPE:
                content_type = value.decode("latin-1") if content_type is None else content_type
            elif name == _CONTENT_LENGTH:
                length = value.decode("latin-1") if length is None else length
            elif name == _REQUEST_ID:
                incoming = value.decode("latin-1") if incoming is None else incoming
            elif name in _PREFLIGHT:
                preflighted = True
        if self.cors is not None:
            send = partial(self.cors.send, send=send, request_headers=Headers(scope=scope))
        guarded = partial(
            self.guard.guard,
            media_type=media_type_of(content_type or ""),
            preflighted=preflighted,
            declared=length,
        )
        return self.observer.observe(scope, receive, send, guarded, incoming)

    def _routed(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        """The keys Starlette's router sets for the ``/graphql`` route."""
        scope["router"] = self.app.router
        scope["endpoint"] = self.endpoint
        scope["path_params"] = {}
        return self.endpoint(scope, receive, send)
