"""Integration, what createIntegration returns, and ingestEvent's receipt."""

from __future__ import annotations

from datetime import datetime

import strawberry

from domain.datetimes import parse_datetime
from domain.enums import EventSource, IntegrationType
from services.ingest import Receipt
from storage import Item

from ..context import Info
from ..fields import computed_field
from ..node.types import Node
from ..provenance.types import ProvenanceEvent
from ..types import enums as _enums  # noqa: F401  (registers the GraphQL enums)

__all__ = ["CreateIntegrationPayload", "IngestReceipt", "Integration"]


def _time(value: str | None) -> datetime | None:
    return None if value is None else parse_datetime(value)


@strawberry.type(
    description="A partner (carrier, warehouse, point of sale) that appends provenance events "
    "to the brand's products with its own ingest key, through ingestEvent or a signed "
    "POST to ingestUrl"
)
class Integration(Node):
    id: strawberry.ID
    name: str
    type: IntegrationType
    source: EventSource = strawberry.field(description="Set on every event it appends")
    event_count: int = strawberry.field(description="Events appended (replays not counted)")
    last_event_at: datetime | None = strawberry.field(
        description="When its latest event was appended (not that event's occurredAt)"
    )
    created_at: datetime
    revoked_at: datetime | None = strawberry.field(
        description="Once set, its key is refused and it appends nothing"
    )

    @classmethod
    def from_item(cls, item: Item) -> Integration:
        return cls(
            id=strawberry.ID(item["id"]),
            name=item["name"],
            type=IntegrationType(item["type"]),
            source=EventSource(item["source"]),
            event_count=int(item.get("eventCount", 0)),
            last_event_at=_time(item.get("lastEventAt")),
            created_at=parse_datetime(item["createdAt"]),
            revoked_at=_time(item.get("revokedAt")),
        )

    @computed_field(
        description="Where a partner that can only send webhooks POSTs its events, signed with "
        "the ingest key (X-Proofgate-Integration and X-Proofgate-Signature headers)"
    )
    def ingest_url(self, info: Info) -> str:
        base = info.context.services.public_url.rstrip("/")
        return f"{base}/ingest/{self.source.path}"


@strawberry.type
class CreateIntegrationPayload:
    integration: Integration
    ingest_key: str = strawberry.field(
        description="Shown once: only its hash is stored. Send it as `Authorization: Bearer` "
        "with ingestEvent, or sign POSTs to ingestUrl with it (HMAC-SHA256 over `<t>.<body>`)."
    )


@strawberry.type(
    description="What an ingested event became. The same eventId again answers the same "
    "receipt and appends nothing."
)
class IngestReceipt:
    integration_id: strawberry.ID
    event_id: str
    product_id: strawberry.ID
    event: ProvenanceEvent

    @classmethod
    def of(cls, receipt: Receipt) -> IngestReceipt:
        return cls(
            integration_id=strawberry.ID(receipt.integration_id),
            event_id=receipt.event_id,
            product_id=strawberry.ID(receipt.product_id),
            event=ProvenanceEvent.from_event(receipt.event),
        )
