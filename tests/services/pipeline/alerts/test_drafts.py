"""The relay's cheap read of a product's recent scans decides exactly as the
plain one: every stored attribute decoded, every ``scannedAt`` parsed by
``strptime``. Generated histories crowd the window edges (exactly 24 h and
1 h old, the scan's own microsecond, a microsecond after it)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.datetimes import DATETIME_FORMAT
from domain.enums import ScanResult
from domain.threats import (
    AlertDraft,
    RecentScan,
    ScanContext,
    ThreatSettings,
    evaluate_scan,
)
from services.paging import query_all
from services.pipeline import ScanEvent
from services.pipeline.alerts.drafts import RECENT_SCANS_MAX, alert_drafts
from services.pipeline.live.tailer import PIPELINE_TENANT
from storage import Put, Storage
from storage.access_patterns import PRODUCT_SCANS
from tests.services.pipeline._support import Product

T0 = datetime(2026, 3, 10, 12, 0, 0, 250000, tzinfo=UTC)
US = timedelta(microseconds=1)
EDGES = (-timedelta(days=1), -timedelta(hours=1), timedelta(0))
OFFSETS = st.one_of(
    st.sampled_from(EDGES).flatmap(lambda edge: st.sampled_from((edge - US, edge, edge + US))),
    st.integers(-26 * 3600 * 10**6, 3600 * 10**6).map(lambda us: us * US),
)
SCAN = st.tuples(
    OFFSETS,
    st.sampled_from(("FR", "DE", "US", "JP", "ZZ", "XX", None)),
    st.sampled_from(("dev_a", "dev_b", None)),
)
RULES = st.builds(
    ThreatSettings,
    geo_min_countries=st.integers(1, 4),
    burst_max_scans=st.integers(0, 6),
)


async def plain_drafts(
    storage: Storage, event: ScanEvent, rules: ThreatSettings
) -> list[AlertDraft]:
    """The read as first written: whole items, ``strptime`` per scan."""
    params = {
        "product_id": event.product_id,
        "start": event.scanned_at - rules.lookback,
        "end": event.scanned_at + US,
    }
    items = await query_all(
        storage, PRODUCT_SCANS, params, tenant=PIPELINE_TENANT, limit=RECENT_SCANS_MAX
    )
    recent = [
        RecentScan(
            datetime.strptime(item["scannedAt"], DATETIME_FORMAT).replace(tzinfo=UTC),
            item.get("country"),
            item.get("deviceHash"),
            item.get("id"),
        )
        for item in items
    ]
    context = ScanContext(
        scan_id=event.scan_id,
        scanned_at=event.scanned_at,
        country=event.country,
        city=event.city,
        device_hash=event.device_hash,
        result=event.result,
        product=event.product,
        recent=recent,
        claim=event.claim,
    )
    return evaluate_scan(context, rules)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    history=st.lists(SCAN, max_size=30),
    own=st.tuples(st.sampled_from(("FR", "BR", None)), st.booleans()),
    rules=RULES,
)
async def test_drafts_equal_the_plain_read(
    storage: Storage,
    history: list[tuple[timedelta, str | None, str | None]],
    own: tuple[str | None, bool],
    rules: ThreatSettings,
) -> None:
    product = Product("brand_1", T0 - timedelta(days=30))
    puts = [
        Put(product.scan(T0 + offset, country=country, device=device)[0])
        for offset, country, device in history
    ]
    country, stored = own
    item, event = product.scan(T0, country=country, device="dev_a", result=ScanResult.AUTHENTIC)
    if stored:  # the relay usually reads after the scan's own write, not always
        puts.append(Put(item))
    for put in puts:
        await storage.transact_write([put])
    assert await alert_drafts(storage, event, rules) == await plain_drafts(storage, event, rules)
