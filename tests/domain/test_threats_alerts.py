from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

import pytest

from domain.enums import Severity, ThreatType
from domain.errors import BadUserInput, ProofgateError
from domain.threats import (
    ALERT_ID_PREFIX,
    SEVERITY_OF,
    AlertDraft,
    AlertKey,
    ThreatSettings,
    alert_id,
    floor_time,
    month_partition,
    parse_alert_id,
    severity_at_least,
)

T0 = datetime(2026, 3, 10, 12, 30, 15, 123456, tzinfo=UTC)


def draft(**changes: object) -> AlertDraft:
    fields: dict[str, object] = {
        "brand_id": "brd_1",
        "product_id": "prd_1",
        "type": ThreatType.BURST_SCAN,
        "severity": Severity.MEDIUM,
        "detected_at": T0,
        "window_start": floor_time(T0, timedelta(hours=1)),
        "details": {"scanCount": 11},
    }
    fields.update(changes)
    return AlertDraft(**fields)  # type: ignore[arg-type]


def test_alert_id_is_stable_and_ignores_what_is_not_identity() -> None:
    first = alert_id(draft())
    assert first == alert_id(draft())
    assert first.startswith(ALERT_ID_PREFIX)
    same = draft(detected_at=T0 + timedelta(minutes=5), details={"scanCount": 40}, country="JP")
    assert alert_id(same) == first
    assert alert_id(draft().key) == first


@pytest.mark.parametrize(
    "change",
    [
        {"brand_id": "brd_2"},
        {"product_id": "prd_2"},
        {"type": ThreatType.GEOGRAPHIC_ANOMALY},
        {"window_start": floor_time(T0, timedelta(hours=1)) + timedelta(hours=1)},
    ],
    ids=["brand", "product", "type", "window"],
)
def test_alert_id_differs_by_each_part_of_its_identity(change: dict[str, object]) -> None:
    assert alert_id(draft(**change)) != alert_id(draft())


@pytest.mark.parametrize("brand", ["brd_1", "a#b", 'x"y', "ünï-çødé", "a,b]"])
def test_alert_id_round_trips(brand: str) -> None:
    key = AlertKey(brand, "prd_9", ThreatType.CHAIN_GAP, T0)
    assert parse_alert_id(alert_id(key)) == key


def test_alert_key_month_is_the_window_month() -> None:
    key = draft(window_start=datetime(2026, 4, 1, tzinfo=UTC), detected_at=T0).key
    assert key.month == "2026-04"


def _encode(parts: object) -> str:
    body = json.dumps(parts, separators=(",", ":")).encode()
    return ALERT_ID_PREFIX + base64.urlsafe_b64encode(body).rstrip(b"=").decode()


@pytest.mark.parametrize(
    "text",
    [
        "",
        "thr_",
        "abc",
        alert_id(draft())[len(ALERT_ID_PREFIX) :],
        alert_id(draft()) + "=",
        alert_id(draft()) + "!",
        ALERT_ID_PREFIX + "x" * 3000,
        _encode(["brd_1", "prd_1", "BURST_SCAN"]),
        _encode(["brd_1", "prd_1", "NOT_A_TYPE", "2026-03-10T12:00:00.000000Z"]),
        _encode(["", "prd_1", "BURST_SCAN", "2026-03-10T12:00:00.000000Z"]),
        _encode(["brd_1", "prd_1", "BURST_SCAN", 5]),
        _encode(["brd_1", "prd_1", "BURST_SCAN", "yesterday"]),
        _encode(["brd_1", "prd_1", "BURST_SCAN", "2026-03-10T12:00:00Z"]),
        _encode({"brand": "brd_1"}),
        ALERT_ID_PREFIX + base64.urlsafe_b64encode(b"\xff\xfe").rstrip(b"=").decode(),
    ],
    ids=lambda text: text[:40] or "empty",
)
def test_parse_alert_id_refuses_anything_alert_id_did_not_produce(text: str) -> None:
    with pytest.raises(BadUserInput):
        parse_alert_id(text)


def test_floor_time_aligns_buckets_to_the_epoch() -> None:
    assert floor_time(T0, timedelta(days=1)) == datetime(2026, 3, 10, tzinfo=UTC)
    assert floor_time(T0, timedelta(hours=1)) == datetime(2026, 3, 10, 12, tzinfo=UTC)
    assert floor_time(T0, timedelta(minutes=15)) == datetime(2026, 3, 10, 12, 30, tzinfo=UTC)
    assert floor_time(T0, None) == T0


def test_floor_time_is_about_the_instant_not_the_zone() -> None:
    local = T0.astimezone(timezone(timedelta(hours=5, minutes=30)))
    assert floor_time(local, timedelta(days=1)) == datetime(2026, 3, 10, tzinfo=UTC)
    assert floor_time(local, None).tzinfo is UTC


def test_month_partition_is_utc() -> None:
    assert month_partition(T0) == "2026-03"
    early_april_in_paris = datetime(2026, 4, 1, 1, 0, tzinfo=timezone(timedelta(hours=2)))
    assert month_partition(early_april_in_paris) == "2026-03"


@pytest.mark.parametrize(
    ("severity", "minimum", "expected"),
    [
        (Severity.LOW, Severity.LOW, True),
        (Severity.LOW, Severity.MEDIUM, False),
        (Severity.HIGH, Severity.MEDIUM, True),
        (Severity.HIGH, Severity.CRITICAL, False),
        (Severity.CRITICAL, Severity.LOW, True),
        (Severity.MEDIUM, Severity.HIGH, False),
    ],
)
def test_severity_at_least_orders_by_rank_not_by_spelling(
    severity: Severity, minimum: Severity, expected: bool
) -> None:
    assert severity_at_least(severity, minimum) is expected


def test_every_threat_type_has_the_specified_severity() -> None:
    assert SEVERITY_OF == {
        ThreatType.GEOGRAPHIC_ANOMALY: Severity.HIGH,
        ThreatType.BURST_SCAN: Severity.MEDIUM,
        ThreatType.SCAN_VELOCITY: Severity.HIGH,
        ThreatType.CLAIMED_PRODUCT_SCAN: Severity.HIGH,
        ThreatType.HASH_TAMPERING: Severity.CRITICAL,
        ThreatType.RECALLED_PRODUCT_SCAN: Severity.LOW,
        ThreatType.CHAIN_GAP: Severity.MEDIUM,
        ThreatType.PRODUCT_RECALL: Severity.CRITICAL,
        ThreatType.OWNERSHIP_DISPUTE: Severity.CRITICAL,
    }


def test_settings_lookback_covers_the_longest_window() -> None:
    assert ThreatSettings().lookback == timedelta(hours=24)
    assert ThreatSettings(burst_window=timedelta(days=2)).lookback == timedelta(days=2)


@pytest.mark.parametrize(
    "change",
    [
        {"geo_window": timedelta(0)},
        {"burst_dedupe": timedelta(seconds=-1)},
        {"tampering_dedupe": None},
        {"geo_min_countries": 0},
        {"burst_max_scans": -1},
        {"velocity_max_total": True},
        {"velocity_max_per_day": Decimal("NaN")},
        {"velocity_max_per_day": 5.0},
    ],
    ids=str,
)
def test_settings_refuse_nonsense(change: dict[str, object]) -> None:
    with pytest.raises(ProofgateError):
        ThreatSettings(**change)  # type: ignore[arg-type]
