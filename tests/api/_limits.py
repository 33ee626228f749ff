"""A gateway with the limits a test chooses, on the embedded store.

The limits do not depend on the backend, so these tests run on SQLite only;
each module starts the apps it needs (start-up takes a few milliseconds).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from _asgi import GraphQLClient, connect, running

from api.app import create_app
from api.limits import Limits
from api.settings import Settings

ADMIN_KEY = "limits-test-admin-key"
CLIENT = ("203.0.113.7", 50000)


class Client(GraphQLClient):
    @asynccontextmanager
    async def at(self, address: str) -> AsyncIterator[Client]:
        """A client of the same app calling from another address."""
        async with connect(self.app, (address, 50000)) as http:
            yield Client(self.app, http)

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
    async with running(app, client) as http:
        yield Client(app, http)
