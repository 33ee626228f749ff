"""``/mcp``: the MCP server over Streamable HTTP, in the gateway's app.

Stateless and answered in JSON: every request carries its own
``Authorization`` and is authenticated here, before the SDK sees it, exactly
as ``/graphql`` does (a bad key is a 401), so no session outlives a revoked
key and nothing is kept per agent (docs/design.md, "MCP tools").
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from domain.errors import ProofgateError
from services.auth import ANONYMOUS, Principal, authenticate

from ..errors import error_response
from .runner import ToolRunner
from .server import build_server

__all__ = ["MCPApp", "MCPEndpoint"]

_PRINCIPAL = "proofgate.mcp.principal"


class MCPApp:
    """One per app, built in its lifespan: the runner needs the open store,
    and a session manager runs once."""

    def __init__(self, runner: ToolRunner) -> None:
        self.runner = runner
        server = build_server(runner, _principal)
        self.manager = StreamableHTTPSessionManager(server, json_response=True, stateless=True)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[MCPApp]:
        """The manager's task group must be left by the task that entered it,
        and an ASGI host may end a lifespan from another task than started
        it; so one task of its own holds it open."""
        started, stop = asyncio.Event(), asyncio.Event()

        async def hold() -> None:
            async with self.manager.run():
                started.set()
                await stop.wait()

        holder = asyncio.create_task(hold())
        ready = asyncio.create_task(started.wait())
        await asyncio.wait((holder, ready), return_when=asyncio.FIRST_COMPLETED)
        if holder.done():
            ready.cancel()
            holder.result()
        try:
            yield self
        finally:
            stop.set()
            await holder


class MCPEndpoint:
    """Routes to the ``MCPApp`` the lifespan keeps on ``app.state.mcp``."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        mcp: MCPApp = scope["app"].state.mcp
        services = mcp.runner.services
        request = Request(scope, receive)
        try:
            scope[_PRINCIPAL] = await authenticate(
                services.storage, request.headers.get("authorization"), services.admin_key_hash
            )
        except ProofgateError as error:
            await error_response(error, 401)(scope, receive, send)
            return
        await mcp.manager.handle_request(scope, receive, send)


async def _principal(ctx: ServerRequestContext[Any, Any]) -> Principal:
    scope = getattr(ctx.request, "scope", None) or {}
    principal: Principal = scope.get(_PRINCIPAL, ANONYMOUS)
    return principal
