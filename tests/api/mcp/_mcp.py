"""MCP clients from the SDK: over Streamable HTTP (to a server process, or
in process through httpx2's ASGI transport) and over stdio."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult

__all__ = ["asgi_client", "error_codes", "http_client", "stdio_client", "structured"]


def _headers(key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"} if key else {}


@asynccontextmanager
async def http_client(url: str, key: str | None = None) -> AsyncIterator[Client]:
    """``cache=None``: tools/list depends on the key, and the SDK caches by URL."""
    http = httpx2.AsyncClient(headers=_headers(key), timeout=30)
    async with (
        http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http), cache=None) as c,
    ):
        yield c


@asynccontextmanager
async def asgi_client(app: Any, key: str | None = None) -> AsyncIterator[Client]:
    transport = httpx2.ASGITransport(app=app, client=("127.0.0.1", 123))
    http = httpx2.AsyncClient(transport=transport, headers=_headers(key), timeout=30)
    mcp = streamable_http_client("http://testserver/mcp", http_client=http)
    async with http, Client(mcp, cache=None) as client:
        yield client


@asynccontextmanager
async def stdio_client(command: str, env: Mapping[str, str]) -> AsyncIterator[Client]:
    params = StdioServerParameters(command=command, args=["mcp"], env=dict(env))
    async with Client(params, cache=None) as client:
        yield client


def structured(result: CallToolResult) -> dict[str, Any]:
    """The data of a call that must have succeeded."""
    assert not result.is_error, result.content
    data: dict[str, Any] = result.structured_content
    return data


def error_codes(result: CallToolResult) -> list[str]:
    """The codes of a call that must have failed."""
    assert result.is_error, result.structured_content
    return [e["extensions"]["code"] for e in result.structured_content["errors"]]
