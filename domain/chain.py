"""The provenance hash chain.

Event ``n`` of a product stores ``previousHash`` (event ``n-1``'s hash; for
event 1, the certificate hash) and ``hash``: SHA-256 (lowercase hex) of the
canonical JSON of every other stored field::

    {"actor", "data", "latitude", "location", "longitude",
     "occurredAt", "previousHash", "sequence", "type"}

An event appended through partner ingest also hashes ``"source"`` (its
``EventSource``); an event without one has no such key, so every hash taken
before sources existed still recomputes (docs/design.md, Partner ingest).
``actor``, ``location``, ``latitude`` and ``longitude`` are ``null`` when absent,
``data`` is ``{}`` when absent, coordinates are strings spelled by
``decimal_text`` and ``occurredAt`` by ``format_datetime``. Because every field
is hashed and each hash is hashed again by the next event, changing, removing
or reordering anything breaks the chain from that event on; ``verify_chain``
says where. Truncating the tail is only visible against the product's chain
head, so pass it when known.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from decimal import Decimal
from typing import NamedTuple

from domain.errors import BadUserInput

from .canonical import JSONObject, canonical_json, decimal_text, normalize_object, sha256_hex
from .datetimes import format_datetime, utc
from .enums import EventSource, ProvenanceEventType

__all__ = [
    "CHAIN_MAX_EVENTS",
    "FUTURE_SKEW",
    "PARTNER_MAX_EVENTS",
    "ChainHead",
    "ChainReport",
    "ProvenanceEvent",
    "check_append",
    "check_not_future",
    "check_room",
    "event_hash",
    "next_event",
    "verify_chain",
]


CHAIN_MAX_EVENTS = 1000
"""The most events a chain may hold (docs/design.md, Provenance): verifying a
product reads its whole chain, so this bounds what one public verification
reads (ten query pages), and the cost model charges exactly that. The last
place is kept for a recall, which is final, so a full chain can still be
recalled."""


PARTNER_MAX_EVENTS = CHAIN_MAX_EVENTS - 100
"""The last sequence partner ingest may append (events with a ``source``):
the last 100 places of a chain are the brand's own (transfers, its events,
the recall), so a partner's system, however fast, cannot fill a product's
chain and lock its brand out of it (docs/design.md, Provenance)."""
FUTURE_SKEW = timedelta(hours=1)
"""How far ahead of the gateway's clock a given ``occurredAt`` may be: a
clock running a little fast, never a date that would pin every later event."""


def check_room(sequence: int, type: ProvenanceEventType, source: EventSource | None = None) -> None:
    """Refuses event ``sequence`` when the chain has no room left for it."""
    if source is not None and sequence > PARTNER_MAX_EVENTS:
        raise BadUserInput(
            f"The provenance chain holds {sequence - 1} events; partner ingest appends at "
            f"most {PARTNER_MAX_EVENTS}, the rest are kept for the brand",
            hint="Send routine handling in fewer, larger events (data holds up to 16 KB).",
            maxEvents=PARTNER_MAX_EVENTS,
        )
    limit = CHAIN_MAX_EVENTS if type is ProvenanceEventType.RECALLED else CHAIN_MAX_EVENTS - 1
    if sequence > limit:
        raise BadUserInput(
            f"The provenance chain holds {sequence - 1} events; a chain holds at most "
            f"{CHAIN_MAX_EVENTS}, the last kept for a recall",
            hint="Record routine handling in fewer, larger events (data holds up to 16 KB).",
            maxEvents=CHAIN_MAX_EVENTS,
        )


def _coordinate(value: Decimal | int | None) -> str | None:
    return None if value is None else decimal_text(value)


@dataclass(frozen=True)
class ProvenanceEvent:
    sequence: int
    type: ProvenanceEventType
    occurred_at: datetime
    previous_hash: str
    hash: str
    actor: str | None = None
    location: str | None = None
    latitude: Decimal | int | None = None
    longitude: Decimal | int | None = None
    data: Mapping[str, object] | None = None
    source: EventSource | None = None

    @classmethod
    def stored(
        cls,
        sequence: int,
        type: ProvenanceEventType,
        occurred_at: datetime,
        previous_hash: str,
        hash: str,
        actor: str | None,
        location: str | None,
        latitude: Decimal | int | None,
        longitude: Decimal | int | None,
        data: Mapping[str, object] | None,
        source: EventSource | None,
    ) -> ProvenanceEvent:
        """The event the dataclass's ``__init__`` makes of these fields, made
        at a fifth of its cost: a frozen ``__init__`` sets each field through
        ``object.__setattr__`` (~2k instructions a field, ~23k an event), and
        a verification rebuilds its product's every event from the store
        (docs/design.md, Verify path). Every field is given, so no default
        is skipped (tests/domain/test_chain.py holds it to ``__init__``)."""
        event = object.__new__(cls)
        object.__setattr__(
            event,
            "__dict__",
            {
                "sequence": sequence,
                "type": type,
                "occurred_at": occurred_at,
                "previous_hash": previous_hash,
                "hash": hash,
                "actor": actor,
                "location": location,
                "latitude": latitude,
                "longitude": longitude,
                "data": data,
                "source": source,
            },
        )
        return event

    def content(self) -> JSONObject:
        return self._fields(normalize_object(self.data or {}, field="data"))

    def _fields(self, data: object) -> JSONObject:
        content: JSONObject = {
            "actor": self.actor,
            "data": data,  # type: ignore[dict-item]
            "latitude": _coordinate(self.latitude),
            "location": self.location,
            "longitude": _coordinate(self.longitude),
            "occurredAt": format_datetime(self.occurred_at),
            "previousHash": self.previous_hash,
            "sequence": self.sequence,
            "type": str(self.type),
        }
        if self.source is not None:
            content["source"] = str(self.source)
        return content


def event_hash(event: ProvenanceEvent) -> str:
    """The hash ``event`` should carry, computed from its content (its ``hash`` is ignored).
    canonical_json normalises the whole content, so ``data`` is walked once,
    not first by ``content()`` and then again."""
    data = event.data or {}
    if not isinstance(data, Mapping):
        normalize_object(data, field="data")  # refused as content() refuses it
    return sha256_hex(canonical_json(event._fields(data), field="event"))


class ChainHead(NamedTuple):
    """What a product records about the end of its chain: 0 and the certificate
    hash before the first event. A tuple, as ``ChainReport``: one is made for
    every verification (docs/design.md, Verify path)."""

    sequence: int
    hash: str
    occurred_at: datetime | None = None

    @classmethod
    def genesis(cls, certificate_hash: str) -> ChainHead:
        return cls(0, certificate_hash)

    @classmethod
    def of(cls, event: ProvenanceEvent) -> ChainHead:
        return cls(event.sequence, event.hash, event.occurred_at)


def check_append(head_occurred_at: datetime | None, new_occurred_at: datetime) -> None:
    """An event may share its predecessor's time but never precede it."""
    if head_occurred_at is not None and utc(new_occurred_at, field="occurredAt") < utc(
        head_occurred_at
    ):
        raise BadUserInput(
            f"occurredAt: {format_datetime(new_occurred_at)} is earlier than the latest event "
            f"({format_datetime(head_occurred_at)})",
            hint="Provenance events are appended in time order; omit occurredAt to use now.",
        )


def check_not_future(occurred_at: datetime, now: datetime) -> None:
    """A time given from outside is at most ``FUTURE_SKEW`` ahead of now:
    appends are in time order, so one far-future event would set the time
    of every later event, hashed into the chain for good."""
    latest = now + FUTURE_SKEW
    if utc(occurred_at, field="occurredAt") > latest:
        raise BadUserInput(
            f"occurredAt: {format_datetime(occurred_at)} is in the future "
            f"(after {format_datetime(latest)})",
            hint="Send the time the event happened, in UTC; omit occurredAt to use now.",
            latest=format_datetime(latest),
        )


def next_event(
    head: ChainHead,
    *,
    type: ProvenanceEventType,
    occurred_at: datetime,
    actor: str | None = None,
    location: str | None = None,
    latitude: Decimal | int | None = None,
    longitude: Decimal | int | None = None,
    data: Mapping[str, object] | None = None,
    source: EventSource | None = None,
) -> ProvenanceEvent:
    """The event that extends ``head``, hashed and ready to store."""
    check_room(head.sequence + 1, type, source)
    check_append(head.occurred_at, occurred_at)
    draft = ProvenanceEvent(
        sequence=head.sequence + 1,
        type=type,
        occurred_at=utc(occurred_at, field="occurredAt"),
        previous_hash=head.hash,
        hash="",
        actor=actor,
        location=location,
        latitude=latitude,
        longitude=longitude,
        data=normalize_object(data or {}, field="data"),
        source=source,
    )
    return replace(draft, hash=event_hash(draft))


class ChainReport(NamedTuple):
    intact: bool
    broken_at: int | None = None
    reason: str | None = None


def verify_chain(
    certificate_hash: str,
    events: Sequence[ProvenanceEvent],
    *,
    head: ChainHead | None = None,
) -> ChainReport:
    """Recompute the chain from the certificate hash.

    ``broken_at`` is the first sequence number that does not verify (for a
    missing tail, the first missing one).
    """
    longest = max(len(events), head.sequence if head is not None else 0)
    if longest > CHAIN_MAX_EVENTS:
        return ChainReport(
            False,
            CHAIN_MAX_EVENTS + 1,
            f"the chain is longer than the {CHAIN_MAX_EVENTS} events a chain may hold",
        )
    previous = certificate_hash
    for expected, event in enumerate(events, start=1):
        if event.sequence != expected:
            return ChainReport(
                False, expected, f"expected event {expected}, found event {event.sequence}"
            )
        if event.previous_hash != previous:
            return ChainReport(
                False, expected, f"event {expected} does not link to the hash before it"
            )
        try:
            recomputed = event_hash(event)
        except BadUserInput:
            return ChainReport(False, expected, f"event {expected} content is not canonical JSON")
        if recomputed != event.hash:
            return ChainReport(False, expected, f"event {expected} content does not match its hash")
        previous = event.hash
    if head is not None:
        count = len(events)
        if head.sequence > count:
            return ChainReport(
                False, count + 1, f"chain ends at event {count} but its head is {head.sequence}"
            )
        if head.sequence < count:
            return ChainReport(
                False, head.sequence + 1, f"events follow the chain head {head.sequence}"
            )
        if head.hash != previous:
            return ChainReport(
                False, max(count, 1), "chain head hash does not match the last event"
            )
    return ChainReport(True)
