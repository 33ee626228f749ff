"""ProvenanceEventInput, validated into an ``EventDraft`` by the service."""

from __future__ import annotations

import strawberry

from ..types.enums import ProvenanceEventType
from ..types.scalars import JSON, DateTime

__all__ = ["ProvenanceEventInput"]


@strawberry.input
class ProvenanceEventInput:
    type: ProvenanceEventType
    actor: str | None = None
    location: str | None = None
    latitude: float | None = strawberry.field(
        default=None, description="Decimal degrees (WGS 84), at most 7 decimals; with longitude"
    )
    longitude: float | None = strawberry.field(
        default=None, description="Decimal degrees (WGS 84), at most 7 decimals; with latitude"
    )
    occurred_at: DateTime | None = strawberry.field(
        default=None, description="Defaults to now; never earlier than the latest event"
    )
    data: JSON | None = strawberry.field(
        default=None, description="A JSON object (at most 16 KB as canonical JSON); integers only"
    )
