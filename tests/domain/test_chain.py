from __future__ import annotations

import dataclasses
import hashlib
import inspect
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.chain import (
    CHAIN_MAX_EVENTS,
    ChainHead,
    ProvenanceEvent,
    check_append,
    event_hash,
    next_event,
    verify_chain,
)
from domain.enums import EventSource, ProvenanceEventType
from domain.errors import BadUserInput
from tests._support.chain import shipped_chain

CERTIFICATE_HASH = hashlib.sha256(b"certificate").hexdigest()
T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def build_chain(length: int = 3) -> list[ProvenanceEvent]:
    return shipped_chain(
        CERTIFICATE_HASH,
        length,
        start=T0,
        actor="actor",
        location="Lyon",
        latitude=Decimal("45.764"),
        longitude=Decimal("4.8357"),
        data=lambda n: {"step": n},
    )


def test_events_are_numbered_and_linked_from_the_certificate() -> None:
    events = build_chain()
    assert [e.sequence for e in events] == [1, 2, 3]
    assert events[0].previous_hash == CERTIFICATE_HASH
    assert events[1].previous_hash == events[0].hash
    assert events[2].previous_hash == events[1].hash
    assert all(e.hash == event_hash(e) for e in events)
    assert verify_chain(CERTIFICATE_HASH, events).intact


def test_third_party_recomputes_an_event_hash() -> None:
    event = next_event(
        ChainHead.genesis(CERTIFICATE_HASH),
        type=ProvenanceEventType.MANUFACTURED,
        occurred_at=datetime(2026, 11, 29, 12, 0, 0, 5, UTC),
        actor="Usine Besançon",
        latitude=Decimal("47.2380"),
        longitude=-6,
        data={"batch": "B-7", "qty": 120},
    )
    document = (
        '{"actor":"Usine Besançon","data":{"batch":"B-7","qty":120},"latitude":"47.238",'
        '"location":null,"longitude":"-6","occurredAt":"2026-11-29T12:00:00.000005Z",'
        f'"previousHash":"{CERTIFICATE_HASH}","sequence":1,"type":"MANUFACTURED"}}'
    )
    assert event.hash == hashlib.sha256(document.encode("utf-8")).hexdigest()


def test_absent_optional_fields_hash_as_null_and_empty_data() -> None:
    event = next_event(
        ChainHead.genesis(CERTIFICATE_HASH), type=ProvenanceEventType.SOLD, occurred_at=T0
    )
    assert event.content() == {
        "actor": None,
        "data": {},
        "latitude": None,
        "location": None,
        "longitude": None,
        "occurredAt": "2026-11-29T12:00:00.000000Z",
        "previousHash": CERTIFICATE_HASH,
        "sequence": 1,
        "type": "SOLD",
    }


def test_a_source_is_hashed_and_cannot_be_removed_or_changed() -> None:
    """An event appended by partner ingest hashes its source; one without a
    source hashes no such key, so older chains keep verifying."""
    event = next_event(
        ChainHead.genesis(CERTIFICATE_HASH),
        type=ProvenanceEventType.RECEIVED,
        occurred_at=T0,
        source=EventSource.WAREHOUSE,
    )
    document = (
        '{"actor":null,"data":{},"latitude":null,"location":null,"longitude":null,'
        '"occurredAt":"2026-11-29T12:00:00.000000Z",'
        f'"previousHash":"{CERTIFICATE_HASH}","sequence":1,"source":"WAREHOUSE",'
        '"type":"RECEIVED"}'
    )
    assert event.hash == hashlib.sha256(document.encode("utf-8")).hexdigest()
    assert verify_chain(CERTIFICATE_HASH, [event]).intact
    for forged in (None, EventSource.POS):
        report = verify_chain(CERTIFICATE_HASH, [replace(event, source=forged)])
        assert (report.intact, report.broken_at) == (False, 1)


TAMPERS: dict[str, Any] = {
    "sequence": 7,
    "type": ProvenanceEventType.RECALLED,
    "actor": "someone else",
    "location": "Lille",
    "latitude": Decimal("45.765"),
    "longitude": None,
    "occurred_at": T0 + timedelta(hours=1, microseconds=1),
    "data": {"step": 2},
    "previous_hash": hashlib.sha256(b"forged").hexdigest(),
    "hash": hashlib.sha256(b"forged").hexdigest(),
    "source": EventSource.SHIPPING,
}


@pytest.mark.parametrize("field", sorted(TAMPERS))
def test_altering_any_field_breaks_the_chain_at_that_event(field: str) -> None:
    events = build_chain()
    events[1] = replace(events[1], **{field: TAMPERS[field]})
    report = verify_chain(CERTIFICATE_HASH, events)
    assert not report.intact
    assert report.broken_at == 2
    assert report.reason


def test_tampering_covers_every_stored_field() -> None:
    event_fields = set(ProvenanceEvent.__dataclass_fields__)
    assert set(TAMPERS) == event_fields


@pytest.mark.parametrize("field", ["actor", "location", "data", "occurred_at", "type"])
def test_rehashing_a_tampered_event_breaks_the_next_link(field: str) -> None:
    events = build_chain()
    forged = replace(events[1], **{field: TAMPERS[field]})
    events[1] = replace(forged, hash=event_hash(forged))
    report = verify_chain(CERTIFICATE_HASH, events)
    assert (report.intact, report.broken_at) == (False, 3)


def test_wrong_certificate_hash_breaks_event_one() -> None:
    report = verify_chain(hashlib.sha256(b"other").hexdigest(), build_chain())
    assert (report.intact, report.broken_at) == (False, 1)


def test_removed_event() -> None:
    events = build_chain()
    del events[1]
    report = verify_chain(CERTIFICATE_HASH, events)
    assert (report.intact, report.broken_at) == (False, 2)
    assert "expected event 2, found event 3" in (report.reason or "")


def test_reordered_events() -> None:
    events = build_chain()
    events[1], events[2] = events[2], events[1]
    assert verify_chain(CERTIFICATE_HASH, events).broken_at == 2


def test_duplicated_event() -> None:
    events = build_chain()
    events.insert(1, events[0])
    assert verify_chain(CERTIFICATE_HASH, events).broken_at == 2


def test_truncated_tail_is_only_visible_against_the_head() -> None:
    events = build_chain()
    head = ChainHead.of(events[-1])
    assert verify_chain(CERTIFICATE_HASH, events, head=head).intact
    assert verify_chain(CERTIFICATE_HASH, events[:2]).intact
    report = verify_chain(CERTIFICATE_HASH, events[:2], head=head)
    assert (report.intact, report.broken_at) == (False, 3)


def test_events_beyond_the_head() -> None:
    events = build_chain()
    report = verify_chain(CERTIFICATE_HASH, events, head=ChainHead.of(events[0]))
    assert (report.intact, report.broken_at) == (False, 2)


def test_head_hash_mismatch() -> None:
    events = build_chain()
    head = ChainHead(3, hashlib.sha256(b"x").hexdigest())
    report = verify_chain(CERTIFICATE_HASH, events, head=head)
    assert (report.intact, report.broken_at) == (False, 3)


def test_empty_chain() -> None:
    assert verify_chain(CERTIFICATE_HASH, []).intact
    assert verify_chain(CERTIFICATE_HASH, [], head=ChainHead.genesis(CERTIFICATE_HASH)).intact
    report = verify_chain(CERTIFICATE_HASH, [], head=ChainHead(2, "x"))
    assert (report.intact, report.broken_at) == (False, 1)
    assert not verify_chain(CERTIFICATE_HASH, [], head=ChainHead.genesis("other")).intact


def test_stored_content_that_is_not_canonical_is_reported_not_raised() -> None:
    events = build_chain()
    events[0] = replace(events[0], data={"weight": 1.5})
    report = verify_chain(CERTIFICATE_HASH, events)
    assert (report.intact, report.broken_at) == (False, 1)
    assert "canonical" in (report.reason or "")


def test_hash_survives_number_normalisation_by_the_store() -> None:
    event = build_chain(1)[0]
    stored = replace(
        event, latitude=Decimal("45.7640"), longitude=Decimal("4.83570"), data={"step": Decimal(0)}
    )
    assert event_hash(stored) == event.hash
    whole = replace(event, latitude=Decimal("45.0"))
    assert event_hash(whole) == event_hash(replace(event, latitude=45))


def test_occurred_at_is_stored_in_utc() -> None:
    from datetime import timezone

    paris = timezone(timedelta(hours=1))
    event = next_event(
        ChainHead.genesis(CERTIFICATE_HASH),
        type=ProvenanceEventType.SHIPPED,
        occurred_at=T0.astimezone(paris),
    )
    assert event.occurred_at.tzinfo is UTC
    assert event.occurred_at == T0


def test_check_append() -> None:
    check_append(None, T0)
    check_append(T0, T0)
    check_append(T0, T0 + timedelta(microseconds=1))
    with pytest.raises(BadUserInput, match="occurredAt") as info:
        check_append(T0, T0 - timedelta(microseconds=1))
    assert info.value.hint


def test_next_event_refuses_time_travel() -> None:
    first = build_chain(1)[0]
    with pytest.raises(BadUserInput):
        next_event(
            ChainHead.of(first),
            type=ProvenanceEventType.SOLD,
            occurred_at=first.occurred_at - timedelta(seconds=1),
        )


def test_next_event_refuses_naive_times_and_bad_data() -> None:
    head = ChainHead.genesis(CERTIFICATE_HASH)
    with pytest.raises(BadUserInput, match="occurredAt"):
        next_event(head, type=ProvenanceEventType.SOLD, occurred_at=datetime(2026, 1, 1))
    with pytest.raises(BadUserInput, match="data"):
        next_event(head, type=ProvenanceEventType.SOLD, occurred_at=T0, data={"w": 0.5})


def test_a_full_chain_takes_only_a_recall() -> None:
    """A chain holds CHAIN_MAX_EVENTS events, the last kept for a recall."""
    nearly_full = ChainHead(CHAIN_MAX_EVENTS - 1, CERTIFICATE_HASH, T0)
    for event_type in (ProvenanceEventType.INSPECTED, ProvenanceEventType.TRANSFERRED):
        with pytest.raises(BadUserInput, match="at most 1000") as refused:
            next_event(nearly_full, type=event_type, occurred_at=T0)
        assert refused.value.extensions["maxEvents"] == CHAIN_MAX_EVENTS
    recall = next_event(nearly_full, type=ProvenanceEventType.RECALLED, occurred_at=T0)
    assert recall.sequence == CHAIN_MAX_EVENTS
    with pytest.raises(BadUserInput):
        next_event(ChainHead.of(recall), type=ProvenanceEventType.RECALLED, occurred_at=T0)
    roomy = ChainHead(CHAIN_MAX_EVENTS - 2, CERTIFICATE_HASH, T0)
    assert next_event(roomy, type=ProvenanceEventType.INSPECTED, occurred_at=T0).sequence == 999


def test_a_chain_longer_than_the_cap_does_not_verify() -> None:
    events = build_chain(3)
    longer = ChainHead(CHAIN_MAX_EVENTS + 1, events[-1].hash)
    report = verify_chain(CERTIFICATE_HASH, events, head=longer)
    assert (report.intact, report.broken_at) == (False, CHAIN_MAX_EVENTS + 1)
    assert report.reason is not None and "longer than the 1000 events" in report.reason
    assert verify_chain(CERTIFICATE_HASH, events, head=ChainHead.of(events[-1])).intact


_FIELDS = st.fixed_dictionaries(
    {
        "sequence": st.integers(),
        "type": st.sampled_from(ProvenanceEventType),
        "occurred_at": st.datetimes(timezones=st.just(UTC)),
        "previous_hash": st.text(max_size=8),
        "hash": st.text(max_size=8),
        "actor": st.none() | st.text(max_size=8),
        "location": st.none() | st.text(max_size=8),
        "latitude": st.none() | st.integers() | st.decimals(allow_nan=False),
        "longitude": st.none() | st.integers() | st.decimals(allow_nan=False),
        "data": st.none() | st.dictionaries(st.text(max_size=4), st.integers(), max_size=3),
        "source": st.none() | st.sampled_from(EventSource),
    }
)


def test_stored_takes_every_field_in_order() -> None:
    """A field added to the dataclass and not to ``stored`` fails here."""
    parameters = list(inspect.signature(ProvenanceEvent.stored).parameters)
    assert parameters == [field.name for field in dataclasses.fields(ProvenanceEvent)]


@given(_FIELDS)
def test_stored_makes_the_event_init_makes(values: dict[str, Any]) -> None:
    """Differential against the dataclass's own ``__init__``: equal, the
    same attributes, and just as frozen."""
    expected = ProvenanceEvent(**values)
    actual = ProvenanceEvent.stored(**values)
    assert type(actual) is ProvenanceEvent
    assert actual == expected
    assert vars(actual) == vars(expected) and repr(actual) == repr(expected)
    with pytest.raises(dataclasses.FrozenInstanceError):
        actual.hash = "forged"  # type: ignore[misc]
