"""Storage with a span per call, for the services of a traced gateway
(``api/observability/spans.py``). Only built when spans are on: otherwise the services get
the store itself and a call costs nothing extra."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from api.observability.spans import span
from storage import AccessPattern, Item, Page, Storage, WriteAction

__all__ = ["TracedStorage"]


def _attributes(backend: str, operation: str, ap: AccessPattern | None) -> dict[str, Any]:
    attributes: dict[str, Any] = {"db.system": backend, "db.operation.name": operation}
    if ap is not None:
        attributes["proofgate.access_pattern"] = ap.id
        attributes["proofgate.access_pattern.name"] = ap.name
    return attributes


class TracedStorage:
    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self.backend = storage.backend

    async def get(self, ap: AccessPattern, /, **params: Any) -> Item | None:
        with span(f"{ap.id} GetItem", _attributes(self.backend, "GetItem", ap)) as call:
            item = await self._storage.get(ap, **params)
            if call is not None:
                call.set_attribute("proofgate.items", int(item is not None))
            return item

    async def batch_get(
        self, ap: AccessPattern, params: Sequence[Mapping[str, Any]]
    ) -> list[Item | None]:
        with span(f"{ap.id} BatchGetItem", _attributes(self.backend, "BatchGetItem", ap)) as call:
            items = await self._storage.batch_get(ap, params)
            if call is not None:
                call.set_attribute("proofgate.items", sum(item is not None for item in items))
            return items

    async def query(
        self,
        ap: AccessPattern,
        params: Mapping[str, Any],
        *,
        tenant: str,
        first: int | None = None,
        after: str | None = None,
    ) -> Page:
        with span(f"{ap.id} Query", _attributes(self.backend, "Query", ap)) as call:
            page = await self._storage.query(ap, params, tenant=tenant, first=first, after=after)
            if call is not None:
                call.set_attribute("proofgate.items", len(page))
            return page

    async def transact_write(self, actions: Sequence[WriteAction]) -> None:
        attributes = _attributes(self.backend, "TransactWriteItems", None)
        with span("TransactWriteItems", attributes) as call:
            if call is not None:
                call.set_attribute("proofgate.actions", len(actions))
            await self._storage.transact_write(actions)

    async def close(self) -> None:
        await self._storage.close()
