"""What a command hands the pipeline: one event per fact that may raise alerts.

Each event has a deterministic id (so a command retried with the same facts
enqueues it once) and round-trips through a stored map, because the relay that
processes it may run in another process, after a restart.

Events are msgspec Structs: the fields, camelCased, are the stored payload,
and the tag is the outbox item's ``kind``, stored beside the payload rather
than in it. Timestamps keep the one spelling of ``domain.datetimes`` (six
fractional digits always, which msgspec's own encoder drops at ``.000000``),
so items written before the events were Structs still decode
(``tests/services/pipeline/test_events.py`` holds them).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from enum import StrEnum
from typing import Any, TypeAlias

import msgspec

from domain.datetimes import AwareDatetime, format_datetime
from domain.enums import ScanResult
from domain.errors import ProofgateError
from domain.threats import ClaimFacts, ProductFacts

__all__ = [
    "AppendEvent",
    "DisputeEvent",
    "EventKind",
    "OutboxEvent",
    "RecallEvent",
    "ScanEvent",
    "WebhookEvent",
    "event_from_payload",
]


class EventKind(StrEnum):
    SCAN = "SCAN"
    RECALL = "RECALL"
    DISPUTE = "DISPUTE"
    APPEND = "APPEND"
    WEBHOOK = "WEBHOOK"


_TAG = "kind"


class _Event(msgspec.Struct, frozen=True, rename="camel", tag_field=_TAG):
    @property
    def kind(self) -> EventKind:
        # Looked up by class: the struct's config and the enum's call cost
        # ~1 us, twice for every outbox item a command builds.
        return _KIND_OF[type(self)]

    def payload(self) -> dict[str, Any]:
        """The stored map: the fields without the tag, timestamps spelled canonically."""
        data: dict[str, Any] = msgspec.to_builtins(self, builtin_types=(datetime,))
        del data[_TAG]
        return _spelled(data)


def _spelled(data: dict[str, Any]) -> dict[str, Any]:
    """In place: ``to_builtins`` made these dicts for this payload alone, and
    rebuilding each cost more than spelling its one or two timestamps."""
    for key, value in data.items():
        kind = type(value)
        if kind is str or value is None:
            continue  # nearly every value: told apart without two isinstance calls
        if kind is datetime or isinstance(value, datetime):
            data[key] = format_datetime(value)
        elif kind is dict or isinstance(value, dict):
            _spelled(value)
    return data


class ScanEvent(_Event, frozen=True, tag=EventKind.SCAN.value):
    """A recorded scan, with the product and claim as the scan transaction
    read them, so a late reprocessing judges the same facts."""

    scan_id: str
    scanned_at: AwareDatetime
    result: ScanResult
    product: ProductFacts
    country: str | None = None
    city: str | None = None
    device_hash: str | None = None
    claim: ClaimFacts | None = None

    @property
    def event_id(self) -> str:
        return f"scan:{self.scan_id}"

    @property
    def brand_id(self) -> str:
        return self.product.brand_id

    @property
    def product_id(self) -> str:
        return self.product.product_id

    @property
    def occurred_at(self) -> datetime:
        return self.scanned_at


class RecallEvent(_Event, frozen=True, tag=EventKind.RECALL.value):
    product_id: str
    brand_id: str
    recalled_at: AwareDatetime
    reason: str | None = None

    @property
    def event_id(self) -> str:
        return f"recall:{self.product_id}"

    @property
    def occurred_at(self) -> datetime:
        return self.recalled_at


class DisputeEvent(_Event, frozen=True, tag=EventKind.DISPUTE.value):
    """``dispute_id`` names the dispute record the command wrote."""

    dispute_id: str
    product_id: str
    brand_id: str
    disputed_at: AwareDatetime
    reason: str | None = None
    dispute_count: int = 1

    @property
    def event_id(self) -> str:
        return f"dispute:{self.product_id}:{self.dispute_id}"

    @property
    def occurred_at(self) -> datetime:
        return self.disputed_at


class AppendEvent(_Event, frozen=True, tag=EventKind.APPEND.value):
    """A provenance event appended after ``previous_occurred_at`` (None for the first)."""

    product_id: str
    brand_id: str
    sequence: int
    occurred_at: AwareDatetime
    previous_occurred_at: AwareDatetime | None
    country: str | None = None
    city: str | None = None

    @property
    def event_id(self) -> str:
        return f"event:{self.product_id}:{self.sequence}"


class WebhookEvent(_Event, frozen=True, tag=EventKind.WEBHOOK.value):
    """One delivery of one alert to one webhook; retries reuse the delivery id,
    so a receiver can drop a repeat it already acted on."""

    delivery_id: str
    webhook_id: str
    brand_id: str
    alert_id: str
    created_at: AwareDatetime

    @property
    def event_id(self) -> str:
        return f"webhook:{self.delivery_id}"

    @property
    def occurred_at(self) -> datetime:
        return self.created_at


OutboxEvent: TypeAlias = ScanEvent | RecallEvent | DisputeEvent | AppendEvent | WebhookEvent

_KIND_OF: dict[type, EventKind] = {
    event: EventKind(str(event.__struct_config__.tag))
    for event in (ScanEvent, RecallEvent, DisputeEvent, AppendEvent, WebhookEvent)
}
"""Each event's kind, its tag: a new event type without an entry fails on
its first ``kind`` (and in tests/services/pipeline/test_events.py)."""


def event_from_payload(kind: str, payload: Mapping[str, Any]) -> OutboxEvent:
    """The relay parks an item whose payload raises the ProofgateError here."""
    try:
        event: OutboxEvent = msgspec.convert({**payload, _TAG: kind}, OutboxEvent)
    except (msgspec.ValidationError, TypeError) as error:
        raise ProofgateError(
            f"Outbox item of kind {kind!r} has a malformed payload: {error}"
        ) from None
    return event
