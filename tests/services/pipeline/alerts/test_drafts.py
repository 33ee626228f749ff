"""The relay's cheap gathering decides exactly as the plain read: every
scan of the lookback, every stored attribute decoded, every ``scannedAt``
parsed by ``strptime``, all six rules run, and then the alerts known to be
stored dropped. The relay skips the rules of known alerts and the reads they
need, and rules out the geographic and burst rules from the product's day
counters. Generated histories crowd the window edges (exactly 24 h and 1 h
old, the scan's own microsecond, a microsecond after it) around scans at
noon, at midnight and a microsecond before it."""

from __future__ import annotations

from collections.abc import Container
from datetime import UTC, datetime, timedelta
from typing import Any
from unittest.mock import patch

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.datetimes import DATETIME_FORMAT
from domain.enums import ThreatType
from domain.threats import (
    SCAN_RULES_BY_TYPE,
    AlertDraft,
    AlertKey,
    RecentScan,
    ScanContext,
    ThreatSettings,
    evaluate_scan,
    scan_alert_key,
    scan_alert_window,
)
from services.paging import query_all
from services.pipeline import ScanEvent
from services.pipeline.alerts import drafts
from services.pipeline.alerts.drafts import RECENT_SCANS_MAX, alert_drafts
from services.pipeline.alerts.known import KnownAlerts
from services.pipeline.live.tailer import PIPELINE_TENANT
from storage import Storage
from storage.access_patterns import PRODUCT_ANALYTICS_DAY, PRODUCT_SCANS
from tests.services.pipeline._support import Product, scan_writes

T0 = datetime(2026, 3, 10, 12, 0, 0, 250000, tzinfo=UTC)
US = timedelta(microseconds=1)
MOMENTS = st.sampled_from(
    (T0, datetime(2026, 3, 10, tzinfo=UTC), datetime(2026, 3, 11, tzinfo=UTC) - US)
)
"""Day and hour edges: the counters the relay reads are per day and hour."""
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
    geo_window=st.sampled_from((timedelta(hours=2), timedelta(days=1), timedelta(days=2))),
    burst_window=st.sampled_from((timedelta(minutes=30), timedelta(hours=1), timedelta(hours=3))),
)


async def plain_drafts(
    storage: Storage, event: ScanEvent, rules: ThreatSettings, known: Container[AlertKey] = ()
) -> list[AlertDraft]:
    """The read as first written: whole items, ``strptime`` per scan, every
    rule run and then the known alerts dropped."""
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
    return [draft for draft in evaluate_scan(context, rules) if draft.key not in known]


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    history=st.lists(SCAN, max_size=30),
    own=st.tuples(st.sampled_from(("FR", "BR", None)), st.booleans()),
    rules=RULES,
    moment=MOMENTS,
    known_types=st.sets(st.sampled_from(sorted(SCAN_RULES_BY_TYPE))),
    few=st.sampled_from((0, drafts._FEW_SCANS, 10**6)),
    shifts=st.sets(st.sampled_from((-1, 0, 1)), min_size=1),
    as_known=st.booleans(),
)
async def test_drafts_equal_the_plain_read(
    storage: Storage,
    history: list[tuple[timedelta, str | None, str | None]],
    own: tuple[str | None, bool],
    rules: ThreatSettings,
    moment: datetime,
    known_types: set[ThreatType],
    few: int,
    shifts: set[int],
    as_known: bool,
) -> None:
    """``few``: how many scans a product may have for the relay to read them
    all rather than its day counters first (both ways are checked).
    ``shifts``: the known alerts are those of the scan's window, or of the
    window before or after it. ``as_known``: held as the relay holds them,
    which tells a known window without spelling the key."""
    product = Product("brand_1", moment - timedelta(days=30))
    writes = [
        scan_writes(*product.scan(moment + offset, country=country, device=device))
        for offset, country, device in history
    ]
    country, stored = own
    item, event = product.scan(moment, country=country, device="dev_a")
    if stored:  # the relay usually reads after the scan's own write, not always
        writes.append(scan_writes(item, event))
    for actions in writes:
        await storage.transact_write(actions)
    known = {
        scan_alert_key(
            type_, event.product, moment + shift * scan_alert_window(type_, rules), rules
        )
        for type_ in known_types
        for shift in shifts
    }
    held: Container[AlertKey] = known
    if as_known:
        held = KnownAlerts()
        for key in sorted(known, key=lambda key: key.window_start):
            held.add(key)
    with patch.object(drafts, "_FEW_SCANS", few):
        gathered = await alert_drafts(storage, event, rules, held)
    assert gathered == await plain_drafts(storage, event, rules, known)


class _Reads:
    """The store, recording the access pattern of every read."""

    def __init__(self, inner: Storage) -> None:
        self.inner = inner
        self.patterns: list[str] = []

    async def query(self, ap: Any, params: Any, **options: Any) -> Any:
        self.patterns.append(ap.id)
        return await self.inner.query(ap, params, **options)

    async def batch_get(self, ap: Any, params: Any) -> Any:
        self.patterns.append(ap.id)
        return await self.inner.batch_get(ap, params)


async def test_a_product_scanned_a_few_times_from_one_country_reads_only_its_counters(
    storage: Storage,
) -> None:
    """Eight quiet scans from one country: the day counters rule out the
    geographic and burst rules, and the scans are not read; reading them
    first would cost more than the counters from about five scans on
    (docs/design.md, Verify path)."""
    product = Product("brand_1", T0 - timedelta(days=30))
    for index in range(7):
        at = T0 - timedelta(hours=3 * index + 1)
        await storage.transact_write(scan_writes(*product.scan(at, country="FR")))
    item, event = product.scan(T0, country="FR", device="dev_a")
    await storage.transact_write(scan_writes(item, event))
    reads = _Reads(storage)
    assert await alert_drafts(reads, event, ThreatSettings()) == []  # type: ignore[arg-type]
    assert reads.patterns == [PRODUCT_ANALYTICS_DAY.id]


async def test_a_scan_at_a_windows_start_is_not_judged_by_the_window_before(
    storage: Storage,
) -> None:
    """The burst of the hour before is known; a scan at the next hour's first
    microsecond is in a window of its own, and raises its burst."""
    boundary = datetime(2026, 3, 10, tzinfo=UTC)
    product = Product("brand_1", boundary - timedelta(days=30))
    for index in range(12):
        at = boundary - timedelta(minutes=4 * index + 1)
        await storage.transact_write(scan_writes(*product.scan(at, country="FR")))
    item, event = product.scan(boundary, country="FR", device="dev_a")
    await storage.transact_write(scan_writes(item, event))
    rules = ThreatSettings()
    known = KnownAlerts()
    known.add(scan_alert_key(ThreatType.BURST_SCAN, event.product, boundary - US, rules))
    drafts_ = await alert_drafts(storage, event, rules, known)
    bursts = [draft for draft in drafts_ if draft.type is ThreatType.BURST_SCAN]
    assert [draft.window_start for draft in bursts] == [boundary]
