"""The MCP server both transports serve: tools/list and tools/call over a
``ToolRunner``; ``identify`` says who the agent is (the HTTP request's key,
or the stdio process's) (docs/design.md, "MCP tools")."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

from api import __version__
from api.mcp.runner import ToolRunner, refusal
from api.observability.request_log import REQUEST_ID_SCOPE_KEY
from domain.errors import ProofgateError
from services.auth import Principal

__all__ = ["INSTRUCTIONS", "Identify", "build_server"]

Identify = Callable[[ServerRequestContext[Any, Any]], Awaitable[Principal]]

INSTRUCTIONS = (
    "proofgate: product authenticity. Each tool runs one registered GraphQL operation and "
    "returns its data; read-only tools record nothing (verify_code never records a scan). "
    "Errors carry GraphQL error codes (UNAUTHENTICATED, FORBIDDEN, NOT_FOUND, "
    "BAD_USER_INPUT, ...). Tools that need a key act as that key's brand."
)


def build_server(runner: ToolRunner, identify: Identify) -> Server[Any]:
    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        try:
            principal = await identify(ctx)
        except ProofgateError as error:
            return types.ListToolsResult(tools=[], meta={"error": error.message})
        return types.ListToolsResult(tools=runner.tools(principal))

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        try:
            principal = await identify(ctx)
        except ProofgateError as error:
            return refusal(error)
        request = ctx.request
        scope = getattr(request, "scope", None) or {}
        return await runner.call(
            principal,
            params.name,
            params.arguments,
            request=request,
            request_id=scope.get(REQUEST_ID_SCOPE_KEY),
        )

    return Server(
        "proofgate",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
