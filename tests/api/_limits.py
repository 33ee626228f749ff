"""A gateway with the limits a test chooses, on the embedded store.

The limits do not depend on the backend, so these tests run on SQLite only;
each module starts the apps it needs (start-up takes a few milliseconds).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from _asgi import GraphQLClient, connect, running

from api.app import create_app
from api.settings.gateway import Settings
from api.settings.limits import Limits
from domain.chain import ChainHead, ProvenanceEvent, event_hash
from domain.enums import ProvenanceEventType
from services.provenance.items import chain_head, event_item, head_update
from storage import Put, Update
from storage.access_patterns import PRODUCT_BY_ID
from storage.limits import TRANSACT_MAX_ITEMS

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


async def grow_chain(
    app: Any, product_id: str, events: int, data: dict[str, Any] | None = None
) -> None:
    """Append ``events`` valid events straight to the store, past the cap the
    API keeps: a chain stored before chains were capped (or forged)."""
    services = app.state.graphql.services
    storage = services.storage
    product = await storage.get(PRODUCT_BY_ID, product_id=product_id)
    head = chain_head(product)
    when = datetime(2025, 1, 1, tzinfo=UTC)
    chunk: list[Any] = []
    for sequence in range(head.sequence + 1, head.sequence + events + 1):
        draft = ProvenanceEvent(
            sequence=sequence,
            type=ProvenanceEventType.INSPECTED,
            occurred_at=when,
            previous_hash=head.hash,
            hash="",
            data=data if data is not None else {"n": sequence},
        )
        event = replace(draft, hash=event_hash(draft))
        head = ChainHead.of(event)
        chunk.append(
            Put(
                event_item(
                    event, product_id=product_id, brand_id=product["brandId"], recorded_at=when
                )
            )
        )
        if len(chunk) == TRANSACT_MAX_ITEMS - 1:
            await storage.transact_write(chunk)
            chunk = []
    chunk.append(Update(PRODUCT_BY_ID.key(product_id=product_id), set=head_update(event)))
    await storage.transact_write(chunk)
