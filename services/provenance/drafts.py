"""A provenance event before it has a place in the chain: validated input."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Protocol

from domain.canonical import JSONObject
from domain.datetimes import utc
from domain.enums import EventSource
from domain.enums import ProvenanceEventType as EventType
from domain.errors import BadUserInput
from domain.validation import ACTOR, LOCATION, validate_coordinates, validate_event_data

__all__ = ["STATUS_EVENT_TYPES", "EventDraft", "EventFields"]

STATUS_EVENT_TYPES = frozenset({EventType.TRANSFERRED, EventType.RECALLED})
"""Appended only by the mutations that also change the product's status."""


class EventFields(Protocol):
    """The fields of an event as a client sends them (``ProvenanceEventInput``)."""

    @property
    def type(self) -> EventType: ...
    @property
    def actor(self) -> str | None: ...
    @property
    def location(self) -> str | None: ...
    @property
    def latitude(self) -> float | None: ...
    @property
    def longitude(self) -> float | None: ...
    @property
    def occurred_at(self) -> datetime | None: ...
    @property
    def data(self) -> object | None: ...


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
    source: EventSource | None = None
    """Set by partner ingest only (docs/design.md, Partner ingest)."""

    @classmethod
    def validate(cls, data: EventFields, *, field: str = "input") -> EventDraft:
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
