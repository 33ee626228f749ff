"""The scan-triggered threat rules.

Each rule is a pure function of a ``ScanContext`` and the settings, returning
at most one draft. A rule only looks at scans up to and including the new
scan's time, so reprocessing a scan later, after newer scans arrived, reaches
the same verdict. Windows are half-open, ``(t - window, t]``: a scan exactly one
window old is outside it.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import ROUND_HALF_EVEN, Context, Decimal
from fractions import Fraction
from typing import TypeGuard

import msgspec

from domain.countries import is_country
from domain.datetimes import AwareDatetime, format_datetime
from domain.enums import ProductStatus, ScanResult, ThreatType

from .alerts import AlertDraft, AlertKey, JSONValue, floor_time
from .settings import ThreatSettings

__all__ = [
    "SCAN_RULES",
    "SCAN_RULES_BY_TYPE",
    "ClaimFacts",
    "ProductFacts",
    "RecentScan",
    "ScanContext",
    "ScanRule",
    "burst_scan",
    "claimed_product_scan",
    "counts_as_country",
    "evaluate_scan",
    "geographic_anomaly",
    "hash_tampering",
    "recalled_product_scan",
    "scan_alert_key",
    "scan_alert_window",
    "scan_velocity",
]

_MICROSECOND = timedelta(microseconds=1)
_DAY_MICROSECONDS = timedelta(days=1) // _MICROSECOND


def counts_as_country(code: str | None) -> TypeGuard[str]:
    """Only officially assigned ISO 3166-1 codes: unknown and local origins
    (None, ZZ, XX, ...) must never make a scan look foreign."""
    return is_country(code)


class RecentScan(msgspec.Struct, frozen=True, gc=False):
    """A Struct, not a frozen dataclass: the relay builds up to a thousand per
    scan, and a Struct is built ~10x faster (0.18 vs 1.85 us)."""

    scanned_at: datetime
    country: str | None
    device_hash: str | None
    scan_id: str | None = None


class ProductFacts(msgspec.Struct, frozen=True, rename="camel"):
    """Stored camelCase inside a scan's outbox payload (``services.pipeline.events``)."""

    product_id: str
    brand_id: str
    created_at: AwareDatetime
    status: ProductStatus
    scan_count: int
    """Scans recorded for the product, this one included."""


class ClaimFacts(msgspec.Struct, frozen=True, rename="camel"):
    """Stored like ``ProductFacts``."""

    device_hash: str
    expires_at: AwareDatetime | None
    """``None``: the claim never expires."""
    claimed_at: AwareDatetime | None = None

    def active_at(self, moment: datetime) -> bool:
        if self.claimed_at is not None and moment < self.claimed_at:
            return False
        return self.expires_at is None or moment < self.expires_at


@dataclass(frozen=True, slots=True)
class ScanContext:
    """The new scan and what the rules need to judge it.

    ``recent`` holds the product's scans within ``ThreatSettings.lookback`` of
    the new scan; it may or may not include the new scan itself (matched by
    ``scan_id``), since the relay reads it after the scan was written.
    """

    scan_id: str
    scanned_at: datetime
    country: str | None
    city: str | None
    device_hash: str | None
    result: ScanResult
    product: ProductFacts
    recent: Sequence[RecentScan] = ()
    claim: ClaimFacts | None = None
    _window_scans: tuple[RecentScan, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        this = RecentScan(self.scanned_at, self.country, self.device_hash, self.scan_id)
        others = tuple(
            scan
            for scan in self.recent
            if scan.scanned_at <= self.scanned_at and scan.scan_id != self.scan_id
        )
        object.__setattr__(self, "_window_scans", (*others, this))

    def scans_within(self, window: timedelta) -> tuple[RecentScan, ...]:
        """Scans in ``(t - window, t]``, the new scan included."""
        start = self.scanned_at - window
        return tuple(scan for scan in self._window_scans if scan.scanned_at > start)


ScanRule = Callable[[ScanContext, ThreatSettings], AlertDraft | None]


def _draft(
    ctx: ScanContext,
    type_: ThreatType,
    window: timedelta,
    details: dict[str, JSONValue],
) -> AlertDraft:
    return AlertDraft.raised(
        type_,
        brand_id=ctx.product.brand_id,
        product_id=ctx.product.product_id,
        detected_at=ctx.scanned_at,
        window=window,
        details=details,
        country=ctx.country,
        city=ctx.city,
    )


def _minutes(window: timedelta) -> int:
    return window // timedelta(minutes=1)


def geographic_anomaly(ctx: ScanContext, settings: ThreatSettings) -> AlertDraft | None:
    origins = (scan.country for scan in ctx.scans_within(settings.geo_window))
    countries = sorted({code for code in origins if counts_as_country(code)})
    if len(countries) < settings.geo_min_countries:
        return None
    listed: list[JSONValue] = list(countries)
    details: dict[str, JSONValue] = {
        "countries": listed,
        "countryCount": len(countries),
        "threshold": settings.geo_min_countries,
        "windowMinutes": _minutes(settings.geo_window),
    }
    return _draft(ctx, ThreatType.GEOGRAPHIC_ANOMALY, settings.geo_dedupe, details)


def burst_scan(ctx: ScanContext, settings: ThreatSettings) -> AlertDraft | None:
    count = len(ctx.scans_within(settings.burst_window))
    if count <= settings.burst_max_scans:
        return None
    details: dict[str, JSONValue] = {
        "scanCount": count,
        "threshold": settings.burst_max_scans,
        "windowMinutes": _minutes(settings.burst_window),
    }
    return _draft(ctx, ThreatType.BURST_SCAN, settings.burst_dedupe, details)


def _age_in_days(ctx: ScanContext) -> Fraction:
    """Exact fractional days since registration, at least one, so a product
    scanned 21 times in its first hour averages 21 a day, not 504."""
    age = (ctx.scanned_at - ctx.product.created_at) // _MICROSECOND
    return max(Fraction(1), Fraction(age, _DAY_MICROSECONDS))


def _decimal(value: Fraction, places: int = 2) -> str:
    context = Context(prec=50, rounding=ROUND_HALF_EVEN)
    quotient = context.divide(Decimal(value.numerator), Decimal(value.denominator))
    return str(quotient.quantize(Decimal(1).scaleb(-places), context=context))


def scan_velocity(ctx: ScanContext, settings: ThreatSettings) -> AlertDraft | None:
    total = ctx.product.scan_count
    if total <= settings.velocity_max_total:
        return None
    days = _age_in_days(ctx)
    per_day = Fraction(total) / days
    if per_day <= Fraction(settings.velocity_max_per_day):
        return None
    details: dict[str, JSONValue] = {
        "scanCount": total,
        "ageDays": _decimal(days),
        "scansPerDay": _decimal(per_day),
        "maxTotal": settings.velocity_max_total,
        "maxPerDay": str(settings.velocity_max_per_day),
    }
    return _draft(ctx, ThreatType.SCAN_VELOCITY, settings.velocity_dedupe, details)


def claimed_product_scan(ctx: ScanContext, settings: ThreatSettings) -> AlertDraft | None:
    """A scan without a device fingerprint counts as foreign: nothing ties it to
    the claimant. Details never name the claimant or either device."""
    claim = ctx.claim
    if claim is None or not claim.active_at(ctx.scanned_at):
        return None
    if ctx.device_hash is not None and ctx.device_hash == claim.device_hash:
        return None
    details: dict[str, JSONValue] = {
        "claimExpiresAt": None if claim.expires_at is None else format_datetime(claim.expires_at),
    }
    return _draft(ctx, ThreatType.CLAIMED_PRODUCT_SCAN, settings.claimed_scan_dedupe, details)


def hash_tampering(ctx: ScanContext, settings: ThreatSettings) -> AlertDraft | None:
    if ctx.result is not ScanResult.COUNTERFEIT:
        return None
    details: dict[str, JSONValue] = {"scanId": ctx.scan_id, "result": str(ctx.result)}
    return _draft(ctx, ThreatType.HASH_TAMPERING, settings.tampering_dedupe, details)


def recalled_product_scan(ctx: ScanContext, settings: ThreatSettings) -> AlertDraft | None:
    if ctx.product.status is not ProductStatus.RECALLED:
        return None
    details: dict[str, JSONValue] = {"scanId": ctx.scan_id, "status": str(ctx.product.status)}
    return _draft(ctx, ThreatType.RECALLED_PRODUCT_SCAN, settings.recalled_scan_dedupe, details)


SCAN_RULES_BY_TYPE: Mapping[ThreatType, ScanRule] = {
    ThreatType.HASH_TAMPERING: hash_tampering,
    ThreatType.CLAIMED_PRODUCT_SCAN: claimed_product_scan,
    ThreatType.GEOGRAPHIC_ANOMALY: geographic_anomaly,
    ThreatType.SCAN_VELOCITY: scan_velocity,
    ThreatType.BURST_SCAN: burst_scan,
    ThreatType.RECALLED_PRODUCT_SCAN: recalled_product_scan,
}
"""Each scan rule by the one type of alert it raises, in evaluation order."""
SCAN_RULES: tuple[ScanRule, ...] = tuple(SCAN_RULES_BY_TYPE.values())

_DEDUPE: Mapping[ThreatType, Callable[[ThreatSettings], timedelta]] = {
    ThreatType.HASH_TAMPERING: lambda settings: settings.tampering_dedupe,
    ThreatType.CLAIMED_PRODUCT_SCAN: lambda settings: settings.claimed_scan_dedupe,
    ThreatType.GEOGRAPHIC_ANOMALY: lambda settings: settings.geo_dedupe,
    ThreatType.SCAN_VELOCITY: lambda settings: settings.velocity_dedupe,
    ThreatType.BURST_SCAN: lambda settings: settings.burst_dedupe,
    ThreatType.RECALLED_PRODUCT_SCAN: lambda settings: settings.recalled_scan_dedupe,
}


def scan_alert_key(
    type_: ThreatType, product: ProductFacts, scanned_at: datetime, settings: ThreatSettings
) -> AlertKey:
    """The key of the alert the rule for ``type_`` raises, if it does, for a
    scan of ``product`` at ``scanned_at``: known before the rule runs, so a
    caller that knows that alert is stored need not gather the rule's
    inputs, nor run it."""
    window = floor_time(scanned_at, scan_alert_window(type_, settings))
    return AlertKey(product.brand_id, product.product_id, type_, window)


def scan_alert_window(type_: ThreatType, settings: ThreatSettings) -> timedelta:
    """The dedupe window of the rule for ``type_``: its alert's window start
    is a scan's time floored to it, so the alert of window start ``w`` is the
    one of every scan in ``[w, w + window)``."""
    return _DEDUPE[type_](settings)


def evaluate_scan(
    ctx: ScanContext,
    settings: ThreatSettings | None = None,
    *,
    skip: Container[ThreatType] = (),
) -> list[AlertDraft]:
    """Every alert one scan raises, most severe first (rule order is fixed),
    but those of the rules for ``skip``, whose alerts the caller already has."""
    settings = settings or ThreatSettings()
    drafts = (
        rule(ctx, settings) for type_, rule in SCAN_RULES_BY_TYPE.items() if type_ not in skip
    )
    return [draft for draft in drafts if draft is not None]
