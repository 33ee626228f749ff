"""The day-counter updates a scan and an alert commit with: built once per
shape and moved onto each day's keys, they are the updates built in full."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from domain.analytics import alert_counters, day_key, scan_counters, shard_of
from domain.countries import COUNTRY_CODES
from domain.enums import ScanResult, ThreatType
from services.analytics.counters import alert_counter_updates, scan_counter_updates
from storage import Update
from storage.access_patterns import BRAND_ANALYTICS_DAY, PRODUCT_ANALYTICS_DAY

_ENTITY = {"entity": "AnalyticsDay"}
ids = st.sampled_from(["01JD8X3V9Q7ZK5M2N4P6R8T0W1", "01JD8X3V9Q7ZK5M2N4P6R8T0W2", "a#b", "p%1"])
moments = st.datetimes(
    min_value=datetime(2020, 1, 1), max_value=datetime(2040, 1, 1), timezones=st.just(UTC)
)


def _in_full(
    brand: str, product: str, event: str, moment: datetime, counters: dict[str, int]
) -> list[Update]:
    day = day_key(moment)
    keys = (
        BRAND_ANALYTICS_DAY.key(brand_id=brand, shard=str(shard_of(event)), day=day),
        PRODUCT_ANALYTICS_DAY.key(product_id=product, day=day),
    )
    return [Update(key, add=counters, set_if_absent=_ENTITY) for key in keys]


@given(
    ids,
    ids,
    ids,
    moments,
    st.none() | st.sampled_from(sorted(COUNTRY_CODES)),
    st.sampled_from(ScanResult),
)
def test_scan_counter_updates_are_the_updates_built_in_full(
    brand: str, product: str, scan: str, moment: datetime, country: str | None, result: ScanResult
) -> None:
    updates = scan_counter_updates(
        brand_id=brand,
        product_id=product,
        scan_id=scan,
        scanned_at=moment,
        country=country,
        result=result,
    )
    counters = scan_counters(moment, country, result)
    assert updates == _in_full(brand, product, scan, moment, counters)


@given(ids, ids, ids, moments, st.sampled_from(ThreatType))
def test_alert_counter_updates_are_the_updates_built_in_full(
    brand: str, product: str, alert: str, moment: datetime, threat: ThreatType
) -> None:
    updates = alert_counter_updates(
        brand_id=brand, product_id=product, alert_id=alert, detected_at=moment, threat=threat
    )
    assert updates == _in_full(brand, product, alert, moment, alert_counters(threat))
