"""A gateway with the limits a test chooses, on the embedded store.

The limits do not depend on the backend, so these tests run on SQLite only;
each module starts the apps it needs (start-up takes a few milliseconds).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import httpx
from starlette.applications import Starlette

from proofgate.api.app import create_app
from proofgate.api.limits import Limits
from proofgate.api.settings import Settings

ADMIN_KEY = "limits-test-admin-key"
CLIENT = ("203.0.113.7", 50000)


class Client:
    def __init__(self, app: Starlette, http: httpx.AsyncClient) -> None:
        self.app = app
        self.http = http

    @asynccontextmanager
    async def at(self, address: str) -> AsyncIterator[Client]:
        """A client of the same app calling from another address."""
        transport = httpx.ASGITransport(app=self.app, client=(address, 50000))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            yield Client(self.app, http)

    async def post(
        self,
        query: str | None,
        variables: Mapping[str, Any] | None = None,
        *,
        key: str | None = None,
        trace: bool = False,
        extensions: Mapping[str, Any] | None = None,
    ) -> httpx.Response:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        if trace:
            headers["X-Proofgate-Trace"] = "1"
        body: dict[str, Any] = {"variables": dict(variables or {})}
        if query is not None:
            body["query"] = query
        if extensions is not None:
            body["extensions"] = dict(extensions)
        return await self.http.post("/graphql", json=body, headers=headers)

    async def execute(
        self,
        query: str,
        variables: Mapping[str, Any] | None = None,
        *,
        key: str | None = None,
        trace: bool = False,
    ) -> dict[str, Any]:
        response = await self.post(query, variables, key=key, trace=trace)
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    async def data(
        self, query: str, variables: Mapping[str, Any] | None = None, *, key: str | None = None
    ) -> dict[str, Any]:
        body = await self.execute(query, variables, key=key)
        assert "errors" not in body, body["errors"]
        data: dict[str, Any] = body["data"]
        return data

    async def brand(self) -> tuple[str, str]:
        """A new brand's id and key."""
        data = await self.data(
            """mutation($input: RegisterBrandInput!) {
                registerBrand(input: $input) { apiKey brand { id } }
            }""",
            {"input": {"name": "Limits", "domain": f"{uuid.uuid4().hex[:8]}.example.com"}},
            key=ADMIN_KEY,
        )
        return data["registerBrand"]["brand"]["id"], data["registerBrand"]["apiKey"]

    async def product(self, brand_key: str, brand_id: str) -> dict[str, Any]:
        data = await self.data(
            """mutation($input: RegisterProductInput!) {
                registerProduct(input: $input) { id verificationCode }
            }""",
            {"input": {"brandId": brand_id, "name": f"Product {uuid.uuid4().hex[:8]}"}},
            key=brand_key,
        )
        product: dict[str, Any] = data["registerProduct"]
        return product


def codes(body: Mapping[str, Any]) -> list[str]:
    return [error["extensions"]["code"] for error in body.get("errors", [])]


@asynccontextmanager
async def serve(
    limits: Limits | None = None, *, client: tuple[str, int] = CLIENT, **settings: Any
) -> AsyncIterator[Client]:
    app = create_app(
        Settings(
            cursor_key=bytes(range(32)),
            admin_key=ADMIN_KEY,
            hash_salt=bytes(range(32)),
            sqlite_path=":memory:",
            limits=limits or Limits(),
            **settings,
        )
    )
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, client=client)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            yield Client(app, http)
