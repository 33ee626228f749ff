"""The ProvenanceEvent type."""

from __future__ import annotations

import strawberry

from domain import chain
from services.provenance.items import event_from_item
from storage import Item

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
    def from_item(cls, item: Item) -> ProvenanceEvent:
        return cls.from_event(event_from_item(item))
