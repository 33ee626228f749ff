"""Outbox payloads as stored: items already written (on SQLite or DynamoDB)
must decode to the same events and re-encode to the same object, whatever
declares the events. The fixtures below were captured from the hand-written
payload()/from_payload() code before the events became msgspec Structs; key
order is compared loosely because a DynamoDB map never kept it."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from domain.enums import ProductStatus, ScanResult
from domain.errors import ProofgateError
from domain.threats import ClaimFacts, ProductFacts
from services.pipeline import AppendEvent, DisputeEvent, RecallEvent, ScanEvent, WebhookEvent
from services.pipeline.events import OutboxEvent, event_from_payload

T0 = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
T1 = datetime(2026, 3, 10, 12, 0, 5, 123456, tzinfo=UTC)
C64, D64 = "c" * 64, "d" * 64
P1 = ProductFacts("P1", "B1", T0 - timedelta(days=3), ProductStatus.RECALLED, 7)

STORED: list[tuple[str, str, OutboxEvent]] = [
    (
        "SCAN",
        '{"scanId":"S1","scannedAt":"2026-03-10T12:00:05.123456Z","result":"COUNTERFEIT",'
        f'"country":"FR","city":"Lyon","deviceHash":"{D64}",'
        '"product":{"productId":"P1","brandId":"B1","createdAt":"2026-03-07T12:00:00.000000Z",'
        '"status":"RECALLED","scanCount":7},'
        f'"claim":{{"deviceHash":"{C64}","expiresAt":"2027-01-04T12:00:00.000000Z",'
        '"claimedAt":"2026-03-09T12:00:00.000000Z"}}',
        ScanEvent(
            "S1",
            T1,
            ScanResult.COUNTERFEIT,
            P1,
            country="FR",
            city="Lyon",
            device_hash=D64,
            claim=ClaimFacts(C64, T0 + timedelta(days=300), T0 - timedelta(days=1)),
        ),
    ),
    (
        "SCAN",
        '{"scanId":"S2","scannedAt":"2026-03-10T12:00:00.000000Z","result":"AUTHENTIC",'
        '"country":null,"city":null,"deviceHash":null,'
        '"product":{"productId":"P2","brandId":"B1","createdAt":"2026-03-10T12:00:00.000000Z",'
        '"status":"ACTIVE","scanCount":1},"claim":null}',
        ScanEvent(
            "S2", T0, ScanResult.AUTHENTIC, ProductFacts("P2", "B1", T0, ProductStatus.ACTIVE, 1)
        ),
    ),
    (
        "SCAN",
        '{"scanId":"S3","scannedAt":"2026-03-10T12:00:00.000000Z","result":"AUTHENTIC",'
        '"country":null,"city":null,"deviceHash":null,'
        '"product":{"productId":"P2","brandId":"B1","createdAt":"2026-03-10T12:00:00.000000Z",'
        '"status":"ACTIVE","scanCount":2},'
        f'"claim":{{"deviceHash":"{C64}","expiresAt":null,"claimedAt":null}}}}',
        ScanEvent(
            "S3",
            T0,
            ScanResult.AUTHENTIC,
            ProductFacts("P2", "B1", T0, ProductStatus.ACTIVE, 2),
            claim=ClaimFacts(C64, None, None),
        ),
    ),
    (
        "RECALL",
        '{"productId":"P1","brandId":"B1","recalledAt":"2026-03-10T12:00:05.123456Z",'
        '"reason":"Lead paint"}',
        RecallEvent("P1", "B1", T1, "Lead paint"),
    ),
    (
        "RECALL",
        '{"productId":"P1","brandId":"B1","recalledAt":"2026-03-10T12:00:00.000000Z","reason":null}',
        RecallEvent("P1", "B1", T0),
    ),
    (
        "DISPUTE",
        '{"disputeId":"D1","productId":"P1","brandId":"B1",'
        '"disputedAt":"2026-03-10T12:00:05.123456Z","reason":"Mine","disputeCount":3}',
        DisputeEvent("D1", "P1", "B1", T1, "Mine", 3),
    ),
    (
        "DISPUTE",
        '{"disputeId":"D2","productId":"P1","brandId":"B1",'
        '"disputedAt":"2026-03-10T12:00:00.000000Z","reason":null,"disputeCount":1}',
        DisputeEvent("D2", "P1", "B1", T0),
    ),
    (
        "APPEND",
        '{"productId":"P1","brandId":"B1","sequence":4,"occurredAt":"2026-03-10T12:00:05.123456Z",'
        '"previousOccurredAt":"2026-03-06T12:00:00.000000Z","country":"FR","city":"Lyon"}',
        AppendEvent("P1", "B1", 4, T1, T0 - timedelta(days=4), "FR", "Lyon"),
    ),
    (
        "APPEND",
        '{"productId":"P1","brandId":"B1","sequence":1,"occurredAt":"2026-03-10T12:00:00.000000Z",'
        '"previousOccurredAt":null,"country":null,"city":null}',
        AppendEvent("P1", "B1", 1, T0, None),
    ),
    (
        "WEBHOOK",
        '{"deliveryId":"whd_1","webhookId":"wh_1","brandId":"B1","alertId":"thr_1",'
        '"createdAt":"2026-03-10T12:00:05.123456Z"}',
        WebhookEvent("whd_1", "wh_1", "B1", "thr_1", T1),
    ),
]


def _id(case: tuple[str, str, OutboxEvent]) -> str:
    return f"{case[0]}-{case[2].event_id}"


@pytest.mark.parametrize("case", STORED, ids=_id)
def test_a_stored_payload_decodes_to_the_same_event(case: tuple[str, str, OutboxEvent]) -> None:
    kind, stored, expected = case
    event = event_from_payload(kind, json.loads(stored))
    assert event == expected
    assert type(event) is type(expected)
    assert event.kind.value == kind


@pytest.mark.parametrize("case", STORED, ids=_id)
def test_an_event_encodes_to_its_stored_payload(case: tuple[str, str, OutboxEvent]) -> None:
    kind, stored, event = case
    payload = event.payload()
    assert event.kind.value == kind
    assert payload == json.loads(stored)
    # The stored timestamps are the canonical spelling, six fractional digits even at .000000.
    assert json.dumps(payload, sort_keys=True) == json.dumps(json.loads(stored), sort_keys=True)


def test_unknown_fields_in_a_stored_payload_are_ignored() -> None:
    kind, stored, expected = STORED[3]
    assert event_from_payload(kind, {**json.loads(stored), "later": 1}) == expected


def test_a_missing_dispute_count_reads_as_one() -> None:
    payload = json.loads(STORED[6][1])
    del payload["disputeCount"]
    assert event_from_payload("DISPUTE", payload) == STORED[6][2]


def _scan(**changes: Any) -> dict[str, Any]:
    payload: dict[str, Any] = json.loads(STORED[0][1])
    for key, value in changes.items():
        if key.startswith("product_"):
            payload["product"][key.removeprefix("product_")] = value
        else:
            payload[key] = value
    return payload


MALFORMED: list[tuple[str, str, Any]] = [
    ("unknown kind", "LAUNCH", _scan()),
    ("not a map", "SCAN", None),
    ("a list", "RECALL", ["P1", "B1"]),
    ("missing field", "RECALL", {"productId": "P1", "brandId": "B1"}),
    ("bad enum", "SCAN", _scan(result="GENUINE")),
    ("bad timestamp", "SCAN", _scan(scannedAt="yesterday")),
    ("naive timestamp", "SCAN", _scan(scannedAt="2026-03-10T12:00:00")),
    ("missing nested", "SCAN", _scan(product=None)),
    ("bad nested status", "SCAN", _scan(product_status="LOST")),
    ("bad nested time", "SCAN", _scan(product_createdAt="soon")),
    ("not a number", "APPEND", {**json.loads(STORED[8][1]), "sequence": "fourth"}),
]


@pytest.mark.parametrize("case", MALFORMED, ids=lambda case: case[0])
def test_a_malformed_payload_is_a_proofgate_error(case: tuple[str, str, Any]) -> None:
    """The relay parks an item whose payload raises ProofgateError (and only that)."""
    _, kind, payload = case
    with pytest.raises(ProofgateError, match="malformed payload") as raised:
        event_from_payload(kind, payload)
    assert type(raised.value) is ProofgateError
