from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import msgspec
import pytest

from domain.enums import ProductStatus, ScanResult, Severity, ThreatType
from domain.threats import (
    AlertDraft,
    ClaimFacts,
    ProductFacts,
    RecentScan,
    ScanContext,
    ThreatSettings,
    alert_id,
    burst_scan,
    claimed_product_scan,
    counts_as_country,
    evaluate_scan,
    geographic_anomaly,
    hash_tampering,
    recalled_product_scan,
    scan_alert_key,
    scan_velocity,
)

T0 = datetime(2026, 3, 10, 12, 30, tzinfo=UTC)
US = timedelta(microseconds=1)
HOUR = timedelta(hours=1)
DAY = timedelta(days=1)
SETTINGS = ThreatSettings()


def product(**changes: object) -> ProductFacts:
    base = ProductFacts(
        product_id="prd_1",
        brand_id="brd_1",
        created_at=T0 - 400 * DAY,
        status=ProductStatus.ACTIVE,
        scan_count=1,
    )
    return msgspec.structs.replace(base, **changes)  # type: ignore[arg-type]


def context(**changes: object) -> ScanContext:
    base = ScanContext(
        scan_id="scn_new",
        scanned_at=T0,
        country="FR",
        city="Paris",
        device_hash="dev_new",
        result=ScanResult.AUTHENTIC,
        product=product(),
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def scans(
    count: int, *, start: datetime, step: timedelta, country: str | None = "FR"
) -> list[RecentScan]:
    return [RecentScan(start + i * step, country, f"dev_{i}", f"scn_{i}") for i in range(count)]


# --- BURST_SCAN ---------------------------------------------------------------


def test_burst_ten_scans_within_an_hour_is_quiet() -> None:
    ctx = context(recent=scans(9, start=T0 - 50 * timedelta(minutes=1), step=timedelta(minutes=5)))
    assert burst_scan(ctx, SETTINGS) is None


def test_burst_eleven_scans_within_an_hour_alerts() -> None:
    ctx = context(recent=scans(10, start=T0 - 50 * timedelta(minutes=1), step=timedelta(minutes=5)))
    draft = burst_scan(ctx, SETTINGS)
    assert draft is not None
    assert (draft.type, draft.severity) == (ThreatType.BURST_SCAN, Severity.MEDIUM)
    assert draft.details["scanCount"] == 11
    assert (draft.country, draft.city, draft.detected_at) == ("FR", "Paris", T0)


@pytest.mark.parametrize(
    ("edge", "alerts"),
    [(T0 - HOUR, False), (T0 - HOUR + US, True)],
    ids=["exactly-one-window-old-is-outside", "just-inside"],
)
def test_burst_window_is_half_open(edge: datetime, alerts: bool) -> None:
    inside = scans(9, start=T0 - 30 * timedelta(minutes=1), step=timedelta(minutes=1))
    ctx = context(recent=[RecentScan(edge, "FR", "dev_edge", "scn_edge"), *inside])
    assert (burst_scan(ctx, SETTINGS) is not None) is alerts


def test_burst_ignores_scans_after_the_new_one() -> None:
    later = scans(20, start=T0 + US, step=US)
    assert burst_scan(context(recent=later), SETTINGS) is None


def test_burst_counts_the_new_scan_once_when_recent_already_holds_it() -> None:
    recent = scans(9, start=T0 - 30 * timedelta(minutes=1), step=timedelta(minutes=1))
    itself = RecentScan(T0, "FR", "dev_new", "scn_new")
    assert burst_scan(context(recent=[*recent, itself]), SETTINGS) is None
    assert burst_scan(
        context(recent=[*recent, msgspec.structs.replace(itself, scan_id="scn_other")]), SETTINGS
    )


def test_burst_threshold_is_a_setting() -> None:
    ctx = context(recent=scans(3, start=T0 - 3 * US, step=US))
    assert burst_scan(ctx, ThreatSettings(burst_max_scans=3)) is not None
    assert burst_scan(ctx, ThreatSettings(burst_max_scans=4)) is None


# --- GEOGRAPHIC_ANOMALY -------------------------------------------------------


def geo_recent(*countries: str | None, at: datetime = T0 - HOUR) -> list[RecentScan]:
    return [RecentScan(at, code, f"dev_{i}", f"scn_{i}") for i, code in enumerate(countries)]


def test_geo_two_countries_is_quiet() -> None:
    assert geographic_anomaly(context(recent=geo_recent("DE", "FR", "DE")), SETTINGS) is None


def test_geo_three_countries_alerts() -> None:
    draft = geographic_anomaly(context(recent=geo_recent("DE", "JP")), SETTINGS)
    assert draft is not None
    assert (draft.type, draft.severity) == (ThreatType.GEOGRAPHIC_ANOMALY, Severity.HIGH)
    assert draft.details["countries"] == ["DE", "FR", "JP"]


def test_geo_unknown_origins_never_count() -> None:
    recent = geo_recent("DE", None, "ZZ", "XX", "", "QM", "AA", "de", "EUR")
    assert geographic_anomaly(context(recent=recent), SETTINGS) is None


def test_geo_counts_recent_countries_even_when_the_new_scan_is_unknown() -> None:
    ctx = context(country=None, recent=geo_recent("DE", "JP", "US"))
    draft = geographic_anomaly(ctx, SETTINGS)
    assert draft is not None
    assert draft.country is None


@pytest.mark.parametrize(
    ("edge", "alerts"),
    [(T0 - DAY, False), (T0 - DAY + US, True)],
    ids=["exactly-24h-old-is-outside", "just-inside"],
)
def test_geo_window_edges(edge: datetime, alerts: bool) -> None:
    recent = [*geo_recent("DE"), *geo_recent("JP", at=edge)]
    assert (geographic_anomaly(context(recent=recent), SETTINGS) is not None) is alerts


@pytest.mark.parametrize(
    ("code", "counts"),
    [
        ("FR", True),
        ("US", True),
        ("ZZ", False),
        ("XX", False),
        ("XK", False),
        ("QZ", False),
        ("AA", False),
        ("QA", True),
        ("EU", False),
        ("UK", False),
        (None, False),
        ("", False),
        ("fr", False),
        ("F1", False),
    ],
)
def test_counts_as_country(code: str | None, counts: bool) -> None:
    assert counts_as_country(code) is counts


# --- SCAN_VELOCITY ------------------------------------------------------------


@pytest.mark.parametrize(("total", "alerts"), [(20, False), (21, True)])
def test_velocity_needs_more_than_twenty_scans(total: int, alerts: bool) -> None:
    ctx = context(product=product(created_at=T0 - DAY, scan_count=total))
    assert (scan_velocity(ctx, SETTINGS) is not None) is alerts


@pytest.mark.parametrize(("total", "alerts"), [(50, False), (51, True)], ids=["5.0/day", "5.1/day"])
def test_velocity_needs_more_than_five_a_day(total: int, alerts: bool) -> None:
    ctx = context(product=product(created_at=T0 - 10 * DAY, scan_count=total))
    draft = scan_velocity(ctx, SETTINGS)
    assert (draft is not None) is alerts
    if draft is not None:
        assert (draft.type, draft.severity) == (ThreatType.SCAN_VELOCITY, Severity.HIGH)
        assert draft.details["scansPerDay"] == "5.10"
        assert draft.details["ageDays"] == "10.00"


def test_velocity_uses_fractional_days() -> None:
    # 10.5 days: 52 scans is 4.95 a day, 53 is 5.05.
    created = T0 - 10 * DAY - 12 * HOUR
    assert (
        scan_velocity(context(product=product(created_at=created, scan_count=52)), SETTINGS) is None
    )
    assert scan_velocity(context(product=product(created_at=created, scan_count=53)), SETTINGS)


@pytest.mark.parametrize("age", [HOUR, timedelta(0), -HOUR], ids=["1h", "0", "clock-skew"])
def test_velocity_counts_at_least_one_day(age: timedelta) -> None:
    ctx = context(product=product(created_at=T0 - age, scan_count=21))
    draft = scan_velocity(ctx, SETTINGS)
    assert draft is not None
    assert draft.details["ageDays"] == "1.00"
    assert draft.details["scansPerDay"] == "21.00"


def test_velocity_rate_is_a_setting() -> None:
    ctx = context(product=product(created_at=T0 - 10 * DAY, scan_count=51))
    assert scan_velocity(ctx, ThreatSettings(velocity_max_per_day=Decimal("5.1"))) is None
    assert scan_velocity(ctx, ThreatSettings(velocity_max_per_day=Decimal("5.09"))) is not None


# --- CLAIMED_PRODUCT_SCAN -----------------------------------------------------

CLAIM = ClaimFacts(device_hash="dev_owner", expires_at=T0 + DAY, claimed_at=T0 - DAY)


def test_claimed_scan_from_another_device_alerts() -> None:
    draft = claimed_product_scan(context(claim=CLAIM), SETTINGS)
    assert draft is not None
    assert (draft.type, draft.severity) == (ThreatType.CLAIMED_PRODUCT_SCAN, Severity.HIGH)
    assert "dev_owner" not in repr(draft) and "dev_new" not in repr(draft)


def test_claimants_own_device_never_alerts() -> None:
    ctx = context(claim=CLAIM, device_hash="dev_owner", result=ScanResult.COUNTERFEIT)
    assert claimed_product_scan(ctx, SETTINGS) is None
    assert all(d.type is not ThreatType.CLAIMED_PRODUCT_SCAN for d in evaluate_scan(ctx))


def test_scan_without_fingerprint_counts_as_foreign() -> None:
    assert claimed_product_scan(context(claim=CLAIM, device_hash=None), SETTINGS) is not None


@pytest.mark.parametrize(
    ("expires_at", "alerts"),
    [(T0, False), (T0 - HOUR, False), (T0 + US, True), (None, True)],
    ids=["expires-at-scan-time", "expired", "active", "never-expires"],
)
def test_claim_expiry(expires_at: datetime | None, alerts: bool) -> None:
    ctx = context(claim=msgspec.structs.replace(CLAIM, expires_at=expires_at))
    assert (claimed_product_scan(ctx, SETTINGS) is not None) is alerts


def test_scan_before_the_claim_does_not_alert() -> None:
    ctx = context(claim=msgspec.structs.replace(CLAIM, claimed_at=T0 + US))
    assert claimed_product_scan(ctx, SETTINGS) is None


def test_unclaimed_product_does_not_alert() -> None:
    assert claimed_product_scan(context(), SETTINGS) is None


# --- HASH_TAMPERING and RECALLED_PRODUCT_SCAN --------------------------------


@pytest.mark.parametrize("result", list(ScanResult))
def test_tampering_only_for_counterfeit(result: ScanResult) -> None:
    draft = hash_tampering(context(result=result), SETTINGS)
    assert (draft is not None) is (result is ScanResult.COUNTERFEIT)
    if draft is not None:
        assert draft.severity is Severity.CRITICAL


@pytest.mark.parametrize("status", list(ProductStatus))
def test_recalled_scan_only_for_recalled_products(status: ProductStatus) -> None:
    draft = recalled_product_scan(context(product=product(status=status)), SETTINGS)
    assert (draft is not None) is (status is ProductStatus.RECALLED)
    if draft is not None:
        assert draft.severity is Severity.LOW


# --- evaluate_scan and dedupe ------------------------------------------------


def test_quiet_scan_raises_nothing() -> None:
    assert evaluate_scan(context()) == []


def test_one_scan_can_raise_several_alerts_most_severe_first() -> None:
    ctx = context(
        result=ScanResult.COUNTERFEIT,
        product=product(status=ProductStatus.RECALLED),
        recent=scans(10, start=T0 - 10 * US, step=US),
        claim=CLAIM,
    )
    types = [draft.type for draft in evaluate_scan(ctx)]
    assert types == [
        ThreatType.HASH_TAMPERING,
        ThreatType.CLAIMED_PRODUCT_SCAN,
        ThreatType.BURST_SCAN,
        ThreatType.RECALLED_PRODUCT_SCAN,
    ]


def ids(ctx: ScanContext) -> dict[ThreatType, str]:
    return {draft.type: alert_id(draft) for draft in evaluate_scan(ctx)}


def attack(at: datetime, scan_id: str) -> ScanContext:
    return context(
        scan_id=scan_id,
        scanned_at=at,
        result=ScanResult.COUNTERFEIT,
        recent=[*scans(11, start=at - 11 * US, step=US), *geo_recent("DE", "JP", at=at - US)],
        product=product(created_at=at - DAY, scan_count=40, status=ProductStatus.RECALLED),
        claim=msgspec.structs.replace(CLAIM, expires_at=None, claimed_at=None),
    )


def test_reprocessing_a_scan_yields_the_same_ids() -> None:
    first = ids(attack(T0, "scn_a"))
    assert len(first) == 6
    assert ids(attack(T0, "scn_a")) == first


def test_scans_in_the_same_windows_share_ids() -> None:
    # 12:30 and 12:45 share every bucket (hourly and daily).
    assert ids(attack(T0, "scn_a")) == ids(attack(T0 + 15 * timedelta(minutes=1), "scn_b"))


def test_next_hour_changes_only_the_hourly_rules() -> None:
    now, later = ids(attack(T0, "scn_a")), ids(attack(T0 + HOUR, "scn_b"))
    changed = {kind for kind in now if now[kind] != later[kind]}
    assert changed == {ThreatType.BURST_SCAN, ThreatType.HASH_TAMPERING}


def test_next_day_changes_every_id() -> None:
    now, tomorrow = ids(attack(T0, "scn_a")), ids(attack(T0 + DAY, "scn_b"))
    assert all(now[kind] != tomorrow[kind] for kind in now)


def test_daily_window_starts_at_utc_midnight() -> None:
    draft = geographic_anomaly(attack(T0, "scn_a"), SETTINGS)
    assert isinstance(draft, AlertDraft)
    assert draft.window_start == datetime(2026, 3, 10, tzinfo=UTC)


@pytest.mark.parametrize("at", [T0, T0 + DAY + 29 * timedelta(minutes=1), T0 - US])
def test_a_rules_key_is_known_before_it_runs(at: datetime) -> None:
    """The relay skips a rule whose alert it knows by this key: it must be
    the key of the draft the rule raises, for every rule."""
    drafts = evaluate_scan(attack(at, "scn_a"))
    assert len(drafts) == 6
    for draft in drafts:
        assert scan_alert_key(draft.type, attack(at, "scn_a").product, at, SETTINGS) == draft.key


def test_skipped_rules_do_not_run() -> None:
    everything = evaluate_scan(attack(T0, "scn_a"))
    skip = {ThreatType.BURST_SCAN, ThreatType.GEOGRAPHIC_ANOMALY}
    rest = evaluate_scan(attack(T0, "scn_a"), skip=skip)
    assert rest == [draft for draft in everything if draft.type not in skip]
