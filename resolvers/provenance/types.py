"""The ProvenanceEvent type."""

from __future__ import annotations

from dataclasses import replace

import strawberry

from domain import chain
from services.provenance.items import event_from_item
from services.provenance.recipients import public_data, recipient_of
from services.visibility import require_owner
from storage import Item

from ..context import Info
from ..fields import computed_field
from ..types.enums import EventSource, ProvenanceEventType
from ..types.scalars import JSON, DateTime

__all__ = ["ProvenanceEvent"]


@strawberry.type(
    description="One link of a product's hash chain. `hash` is the SHA-256 of the canonical "
    "JSON of every other field (coordinates as decimal strings); `previousHash` is the hash "
    "of the event before, or the certificate hash for event 1. `source` is set on events a "
    "partner integration appended (ingestEvent) and is then hashed too; an event without one "
    "hashes no `source` key."
)
class ProvenanceEvent:
    sequence: int
    type: ProvenanceEventType
    actor: str | None
    location: str | None
    latitude: float | None
    longitude: float | None
    occurred_at: DateTime
    data: JSON
    hash: str
    previous_hash: str
    source: EventSource | None
    _brand_id: strawberry.Private[str | None] = None
    _recipient: strawberry.Private[str | None] = None

    @computed_field(
        description="Who a TRANSFERRED event names as the new owner; the brand's keys only "
        "(`data.to` holds a keyed digest of it, which is what the hash covers)"
    )
    def recipient(self, info: Info) -> str | None:
        if self._recipient is None or self._brand_id is None:
            return None
        require_owner(info.context.principal, self._brand_id, "recipient")
        return self._recipient

    @classmethod
    def from_event(cls, event: chain.ProvenanceEvent) -> ProvenanceEvent:
        return cls(
            sequence=event.sequence,
            type=event.type,
            actor=event.actor,
            location=event.location,
            latitude=None if event.latitude is None else float(event.latitude),
            longitude=None if event.longitude is None else float(event.longitude),
            occurred_at=event.occurred_at,
            data=JSON(dict(event.data or {})),
            hash=event.hash,
            previous_hash=event.previous_hash,
            source=event.source,
        )

    @classmethod
    def from_item(cls, item: Item, *, owner: bool, salt: bytes) -> ProvenanceEvent:
        """``owner``: the reader may see the brand's business, here who a
        product was transferred to (docs/design.md, Transferees)."""
        event = event_from_item(item)
        if not owner:
            event = replace(event, data=public_data(item, salt))
        node = cls.from_event(event)
        node._brand_id = item.get("brandId")
        node._recipient = recipient_of(item)
        return node
