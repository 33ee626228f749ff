"""An app in this process over HTTP through httpx's ASGI transport, and a GraphQL client of it."""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
from starlette.applications import Starlette

__all__ = [
    "ADMIN_KEY",
    "DEFAULT_CLIENT",
    "GraphQLClient",
    "codes",
    "connect",
    "environment",
    "running",
    "serving",
]

DEFAULT_CLIENT = ("127.0.0.1", 123)
ADMIN_KEY = "asgi-test-admin-key"
_SECRET_32 = base64.urlsafe_b64encode(bytes(range(32))).decode()


def environment(data_dir: Path, **values: str) -> dict[str, str]:
    """``PROOFGATE_*`` variables for an in-memory gateway, plus ``values``."""
    return {
        "PROOFGATE_DATA_DIR": str(data_dir),
        "PROOFGATE_SQLITE_PATH": ":memory:",
        "PROOFGATE_ADMIN_KEY": ADMIN_KEY,
        "PROOFGATE_CURSOR_KEY": _SECRET_32,
        "PROOFGATE_HASH_SALT": _SECRET_32,
        **values,
    }


def codes(body: Mapping[str, Any]) -> list[str]:
    """The ``extensions.code`` of every error in a response body."""
    return [error["extensions"]["code"] for error in body.get("errors", [])]


@asynccontextmanager
async def connect(
    app: Starlette, client: tuple[str, int] = DEFAULT_CLIENT
) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client of ``app`` that calls from the ``client`` address."""
    transport = httpx.ASGITransport(app=app, client=client)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        yield http


@asynccontextmanager
async def running(
    app: Starlette, client: tuple[str, int] = DEFAULT_CLIENT
) -> AsyncIterator[httpx.AsyncClient]:
    """``connect``, with the app's lifespan running for as long as the client is open."""
    async with app.router.lifespan_context(app), connect(app, client) as http:
        yield http


class GraphQLClient:
    codes = staticmethod(codes)

    def __init__(self, app: Starlette, http: httpx.AsyncClient) -> None:
        self.app = app
        self.http = http

    async def drained(self, timeout: float = 10) -> None:
        """Until the outbox holds no item, waiting or leased: the relay has
        raised, written and counted every alert of the commands so far."""
        deadline = time.monotonic() + timeout
        while (backlog := await self.app.state.pipeline.backlog()).queued:
            assert time.monotonic() < deadline, f"{backlog.queued} outbox items after {timeout} s"
            await asyncio.sleep(0.02)

    async def post(
        self,
        query: str | None,
        variables: Mapping[str, Any] | None = None,
        *,
        key: str | None = None,
        trace: bool = False,
        extensions: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        """``query=None`` sends no query, as a persisted-query client does."""
        sent = dict(headers or {})
        if key:
            sent["Authorization"] = f"Bearer {key}"
        if trace:
            sent["X-Proofgate-Trace"] = "1"
        body: dict[str, Any] = {"variables": dict(variables or {})}
        if query is not None:
            body["query"] = query
        if extensions is not None:
            body["extensions"] = dict(extensions)
        return await self.http.post("/graphql", json=body, headers=sent)

    async def execute(
        self,
        query: str,
        variables: Mapping[str, Any] | None = None,
        *,
        key: str | None = None,
        trace: bool = False,
        headers: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """The response body; any HTTP status but 200 fails the test."""
        response = await self.post(query, variables, key=key, trace=trace, headers=headers)
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    async def data(
        self, query: str, variables: Mapping[str, Any] | None = None, *, key: str | None = None
    ) -> dict[str, Any]:
        """The data of a response that must have no errors."""
        body = await self.execute(query, variables, key=key)
        assert "errors" not in body, body["errors"]
        data: dict[str, Any] = body["data"]
        return data


@asynccontextmanager
async def serving(data_dir: Path, **values: str) -> AsyncIterator[GraphQLClient]:
    """The gateway exactly as ``proofgate serve`` assembles it from these variables."""
    from api.app import create_app
    from api.settings.gateway import Settings

    app = create_app(Settings.from_env(environment(data_dir, **values)))
    async with running(app) as http:
        yield GraphQLClient(app, http)


def answer(body: dict[str, Any]) -> dict[str, Any]:
    """A response body without its extensions: every query and mutation
    carries ``extensions.cost``, which tests of other things do not compare."""
    return {key: value for key, value in body.items() if key != "extensions"}
