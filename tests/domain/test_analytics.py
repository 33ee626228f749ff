from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.analytics import (
    BRAND_SHARDS,
    MAX_DAYS,
    alert_counters,
    countries_counted,
    day_key,
    days_in,
    hour_count,
    scan_counters,
    shard_of,
    summarize,
)
from domain.enums import ScanResult, ThreatType
from domain.errors import BadUserInput

DAY = date(2026, 11, 28)


def test_a_range_includes_both_ends_up_to_92_days() -> None:
    assert days_in(DAY, DAY) == [DAY]
    assert len(days_in(DAY, DAY + timedelta(days=MAX_DAYS - 1))) == MAX_DAYS
    with pytest.raises(BadUserInput, match="at most 92 days"):
        days_in(DAY, DAY + timedelta(days=MAX_DAYS))
    with pytest.raises(BadUserInput, match="before"):
        days_in(DAY, DAY - timedelta(days=1))


def test_shards_are_stable_and_all_used() -> None:
    ids = [f"scan-{n}" for n in range(400)]
    shards = Counter(shard_of(scan_id) for scan_id in ids)
    assert set(shards) == set(range(BRAND_SHARDS))
    assert min(shards.values()) > 400 / BRAND_SHARDS / 2
    assert [shard_of(i) for i in ids] == [shard_of(i) for i in ids]


def test_shards_of_a_day_merge_into_one_summary() -> None:
    at = datetime(2026, 11, 28, 23, 59, tzinfo=UTC)
    first = scan_counters(at, "DE", ScanResult.AUTHENTIC)
    second = scan_counters(at.replace(hour=3), None, ScanResult.SUSPICIOUS)
    # DynamoDB hands numbers back as Decimal; the entity attribute is no counter.
    stored = {k: Decimal(v) for k, v in first.items()} | {"entity": "AnalyticsDay"}
    threats = alert_counters(ThreatType.BURST_SCAN)
    days = [DAY, DAY + timedelta(days=1)]
    summary = summarize(days, [(DAY, stored), (DAY, second), (DAY, threats), (DAY, first)])
    assert summary.daily == [(DAY, 3), (DAY + timedelta(days=1), 0)]
    assert summary.hourly[23] == 2 and summary.hourly[3] == 1 and sum(summary.hourly) == 3
    assert summary.countries == Counter({"DE": 2})
    assert summary.results == Counter({"AUTHENTIC": 2, "SUSPICIOUS": 1})
    assert summary.threats == Counter({"BURST_SCAN": 1})


def test_a_day_item_names_its_countries_and_counts_its_hours() -> None:
    """What the relay reads to rule out the geographic and burst rules."""
    at = datetime(2026, 11, 28, 23, 59, tzinfo=UTC)
    stored = (
        {k: Decimal(v) * 2 for k, v in scan_counters(at, "DE", ScanResult.AUTHENTIC).items()}
        | {"entity": "AnalyticsDay", "c_FR": 1}
        | alert_counters(ThreatType.BURST_SCAN)
    )
    assert sorted(countries_counted(stored)) == ["DE", "FR"]
    assert hour_count(stored, 23) == 2 and hour_count(stored, 0) == 0


_MOMENTS = st.datetimes(min_value=datetime(1000, 1, 1), timezones=st.just(UTC))


@given(_MOMENTS | st.dates(date(1000, 1, 1)))
def test_day_key_spells_a_day_as_strftime_does(moment: datetime | date) -> None:
    """Held to strftime, the spelling it replaced (the differential oracle)."""
    assert day_key(moment) == moment.strftime("%Y-%m-%d")
