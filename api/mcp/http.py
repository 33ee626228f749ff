"""``/mcp``: the MCP server over Streamable HTTP, in the gateway's app.

Stateless and answered in JSON: every request carries its own
``Authorization`` and is authenticated here, before the SDK sees it, exactly
as ``/graphql`` does (a bad key is a 401), so no session outlives a revoked
key and nothing is kept per agent. The SDK is loaded, and its session
manager started, on the first request to ``/mcp``: a gateway no agent talks
to pays nothing for it (docs/design.md, "MCP tools").
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import strawberry
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from api.graphql.errors import error_response
from api.mcp.tools import ToolSpec
from domain.errors import ProofgateError
from services.auth import ANONYMOUS, Principal, authenticate
from services.context import Services

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

__all__ = ["MCPEndpoint", "MCPService"]

_PRINCIPAL = "proofgate.mcp.principal"


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
    """Routes to the ``MCPService`` the lifespan keeps on ``app.state.mcp``."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        mcp: MCPService = scope["app"].state.mcp
        request = Request(scope, receive)
        try:
            scope[_PRINCIPAL] = await authenticate(
                mcp.services.storage,
                request.headers.get("authorization"),
                mcp.services.admin_key_hash,
            )
        except ProofgateError as error:
            await error_response(error, 401)(scope, receive, send)
            return
        manager = await mcp.manager()
        await manager.handle_request(scope, receive, send)


async def _principal(ctx: ServerRequestContext[Any, Any]) -> Principal:
    scope = getattr(ctx.request, "scope", None) or {}
    principal: Principal = scope.get(_PRINCIPAL, ANONYMOUS)
    return principal
