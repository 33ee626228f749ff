"""ProvenanceEventInput and the validated draft it becomes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

import strawberry

from domain.canonical import JSONObject
from domain.datetimes import utc
from domain.enums import ProvenanceEventType as EventType
from domain.errors import BadUserInput
from domain.validation import ACTOR, LOCATION, validate_coordinates, validate_event_data

from ..types.enums import ProvenanceEventType
from ..types.scalars import JSON, DateTime

__all__ = ["STATUS_EVENT_TYPES", "EventDraft", "ProvenanceEventInput"]

STATUS_EVENT_TYPES = frozenset({EventType.TRANSFERRED, EventType.RECALLED})
"""Appended only by the mutations that also change the product's status."""


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


@dataclass(frozen=True)
class EventDraft:
    """An event before it has a place in the chain. ``occurred_at`` None means
    the time of the append."""

    type: EventType
    occurred_at: datetime | None = None
    actor: str | None = None
    location: str | None = None
    latitude: Decimal | None = None
    longitude: Decimal | None = None
    data: JSONObject | None = None

    @classmethod
    def validate(cls, data: ProvenanceEventInput, *, field: str = "input") -> EventDraft:
        event_type = EventType(data.type)
        if event_type in STATUS_EVENT_TYPES:
            mutation = "transferProduct" if event_type is EventType.TRANSFERRED else "recallProduct"
            raise BadUserInput(
                f"{field}.type: {event_type.value} events change the product's status",
                hint=f"Use {mutation}, which appends the event and updates the status together.",
            )
        latitude, longitude = validate_coordinates(data.latitude, data.longitude)
        return cls(
            type=event_type,
            occurred_at=utc(data.occurred_at, field=f"{field}.occurredAt")
            if data.occurred_at
            else None,
            actor=ACTOR.optional(data.actor, field=f"{field}.actor"),
            location=LOCATION.optional(data.location, field=f"{field}.location"),
            latitude=latitude,
            longitude=longitude,
            data=validate_event_data(data.data, field=f"{field}.data"),
        )
