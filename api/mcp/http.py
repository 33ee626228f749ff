"""``/mcp``: the MCP server over Streamable HTTP, in the gateway's app.

Stateless and answered in JSON: every request carries its own
``Authorization`` and is authenticated here, before the SDK sees it, by the
authentication every route shares (a bad key is a 401, a guessing address
429), so no session outlives a revoked key and nothing is kept per agent.
The SDK is loaded, and its session manager started, on the first request to
``/mcp``: a gateway no agent talks to pays nothing for it (docs/design.md, "MCP tools").
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import strawberry
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from api.http.authentication import Authenticator
from api.http.guard import HTTPGuard
from api.mcp.tools import ToolSpec
from api.settings.gateway import Settings
from api.wire.errors import error_response
from domain.errors import BadUserInput, Forbidden
from services.auth import ANONYMOUS, Principal
from services.context import Services

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

__all__ = ["MCPEndpoint", "MCPService", "allowed_origin"]

_PRINCIPAL = "proofgate.mcp.principal"
_LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})


class MCPService:
    """One per app, for its lifespan (``running``)."""

    def __init__(
        self, schema: strawberry.Schema, services: Services, tools: Mapping[str, ToolSpec]
    ) -> None:
        self.schema = schema
        self.services = services
        self.tools = tools
        self._lock = asyncio.Lock()
        self._stop = asyncio.Event()
        self._holder: asyncio.Task[None] | None = None
        self._manager: StreamableHTTPSessionManager | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[MCPService]:
        try:
            yield self
        finally:
            self._stop.set()
            if self._holder is not None:
                await self._holder

    async def manager(self) -> StreamableHTTPSessionManager:
        async with self._lock:
            if self._manager is None:
                self._manager = await self._start()
        return self._manager

    async def _start(self) -> StreamableHTTPSessionManager:
        """The manager's task group must be left by the task that entered it,
        so one task of its own holds it open until the lifespan ends; it starts
        in a fresh context, not in the first request's."""
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        from api.mcp.runner import ToolRunner
        from api.mcp.server import build_server

        server = build_server(ToolRunner(self.schema, self.services, self.tools), _principal)
        manager = StreamableHTTPSessionManager(server, json_response=True, stateless=True)
        started = asyncio.Event()

        async def hold() -> None:
            async with manager.run():
                started.set()
                await self._stop.wait()

        self._holder = asyncio.create_task(hold(), context=contextvars.Context())
        ready = asyncio.create_task(started.wait())
        await asyncio.wait((self._holder, ready), return_when=asyncio.FIRST_COMPLETED)
        if not started.is_set():
            ready.cancel()
            self._holder.result()
        return manager


class MCPEndpoint:
    """Routes to the ``MCPService`` the lifespan keeps on ``app.state.mcp``.

    What every route gets (docs/design.md, "MCP tools"): authentication with
    the failed-auth throttle (``api/http/authentication.py``) and the body
    limit of ``/graphql`` (``HTTPGuard``). What ``/mcp`` adds: POST only (a
    stateless server sends nothing unasked, so ``GET``'s stream would never
    end: 405, as the transport allows), and a browser's request only from an
    allowed origin (``allowed_origin``: MCP's guard against DNS rebinding).
    """

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        settings: Settings = scope["app"].state.settings
        if scope["method"] != "POST":
            refusal = BadUserInput(
                "/mcp answers POST only: this server is stateless and streams nothing",
                hint="POST JSON-RPC messages to /mcp with Accept: application/json.",
            )
            response = error_response(refusal, 405)
            response.headers["Allow"] = "POST"
            await response(scope, receive, send)
            return
        origin = Headers(scope=scope).get("origin")
        if origin is not None and not allowed_origin(origin, settings):
            forbidden = Forbidden(
                f"Origin {origin[:100]} may not call /mcp",
                hint="Add it to PROOFGATE_CORS_ORIGINS, or call from a server (no Origin).",
            )
            await error_response(forbidden, 403)(scope, receive, send)
            return
        guard = HTTPGuard(_authenticated, max_bytes=settings.limits.max_body_bytes, path="/mcp")
        await guard(scope, receive, send)


async def _authenticated(scope: Scope, receive: Receive, send: Send) -> None:
    app = scope["app"]
    mcp: MCPService = app.state.mcp
    authenticator: Authenticator = app.state.graphql.authenticator
    principal = await authenticator.principal_or_refusal(Request(scope, receive))
    if not isinstance(principal, Principal):
        await principal(scope, receive, send)
        return
    scope[_PRINCIPAL] = principal
    manager = await mcp.manager()
    await manager.handle_request(scope, receive, send)


def allowed_origin(origin: str, settings: Settings) -> bool:
    """A browser page may call only from an origin the operator named
    (``PROOFGATE_CORS_ORIGINS``), the public URL's, or a loopback one: a page
    whose name was rebound to this address still sends its own origin."""
    if origin in settings.cors_origins:
        return True
    parts = urlsplit(origin)
    public = urlsplit(settings.label_url)
    if (parts.scheme, parts.netloc) == (public.scheme, public.netloc):
        return True
    return parts.scheme in ("http", "https") and parts.hostname in _LOOPBACK


async def _principal(ctx: ServerRequestContext[Any, Any]) -> Principal:
    scope = getattr(ctx.request, "scope", None) or {}
    principal: Principal = scope.get(_PRINCIPAL, ANONYMOUS)
    return principal
