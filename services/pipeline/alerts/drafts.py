"""From an outbox event to the alert drafts the threat rules raise.

The rules are pure (``domain.threats``); this module only gathers
their inputs. A scan event already carries the product and claim as the scan
transaction read them; the product's recent scans come from AP10, read up to
the scan's own time so a late reprocessing reaches the same verdict.

Only what can still change the outcome is read: a rule whose alert for
this scan's dedupe window is known to be stored is not run, and the scans
it would read are not read; nor are the geographic and burst rules when
the product's day counters (AP27, written with every scan) show too few
countries or scans for them (docs/design.md, "Verify path").
"""

from __future__ import annotations

from collections.abc import Container
from datetime import date, datetime, timedelta

from domain.analytics import countries_counted, day_key, hour_count
from domain.datetimes import parse_datetime
from domain.enums import ThreatType
from domain.threats import (
    AlertDraft,
    AlertKey,
    RecentScan,
    ScanContext,
    ThreatSettings,
    chain_gap,
    counts_as_country,
    evaluate_scan,
    floor_time,
    ownership_dispute,
    product_recall,
    scan_alert_key,
    scan_alert_window,
)
from services.paging import query_all
from services.pipeline.alerts.known import KnownAlerts
from services.pipeline.events import AppendEvent, DisputeEvent, OutboxEvent, RecallEvent, ScanEvent
from services.pipeline.live.tailer import PIPELINE_TENANT
from storage import Item, Storage
from storage.access_patterns import PRODUCT_ANALYTICS_DAY, PRODUCT_SCANS

__all__ = ["RECENT_SCANS_MAX", "alert_drafts", "recent_scans"]

RECENT_SCANS_MAX = 1000
"""Enough to decide every rule: past this many scans in the lookback window a
burst has long been raised, and more reading would only slow the relay."""
_MICROSECOND = timedelta(microseconds=1)
_HOUR = timedelta(hours=1)
_GEO, _BURST = ThreatType.GEOGRAPHIC_ANOMALY, ThreatType.BURST_SCAN
_SKIPPABLE = (_GEO, _BURST, ThreatType.SCAN_VELOCITY)
"""Rules not run when their alert is known: the two that read scans, and
velocity's exact arithmetic. The others cost less than their key."""
_FEW_SCANS = 5
"""A product scanned this few times has about as few scans in its lookback
(scans committing beside this one may add a few): reading them costs less
than reading its day counters first. Either way decides the same. Measured
on a SQLite file (callgrind): reading n scans ~128,000 + 21,500 n
instructions, the two day counters ~237,000 whatever n, so the counters
win from about 5 scans (12 scans: 387,000 against 237,000)."""


def _recent(item: Item) -> RecentScan:
    return RecentScan(
        parse_datetime(item["scannedAt"]),
        item.get("country"),
        item.get("deviceHash"),
        item.get("id"),
    )


async def recent_scans(storage: Storage, event: ScanEvent, window: timedelta) -> list[RecentScan]:
    """The product's scans in ``(t - window, t]``, newest first, at most
    ``RECENT_SCANS_MAX``."""
    params = {
        "product_id": event.product_id,
        "start": event.scanned_at - window,
        "end": event.scanned_at + _MICROSECOND,
    }
    items = await query_all(
        storage, PRODUCT_SCANS, params, tenant=PIPELINE_TENANT, limit=RECENT_SCANS_MAX
    )
    return [_recent(item) for item in items]


def _days(event: ScanEvent, window: timedelta) -> list[date]:
    """The UTC days holding ``(t - window, t]``, newest first."""
    last = event.scanned_at.date()
    first = (event.scanned_at - window + _MICROSECOND).date()
    return [last - timedelta(days=n) for n in range((last - first).days + 1)]


def _hours(event: ScanEvent, window: timedelta) -> list[datetime]:
    """The UTC hours holding ``(t - window, t]``."""
    first = floor_time(event.scanned_at - window + _MICROSECOND, _HOUR)
    return [first + n * _HOUR for n in range((event.scanned_at - first) // _HOUR + 1)]


async def _ruled_out(
    storage: Storage, event: ScanEvent, settings: ThreatSettings, pending: set[ThreatType]
) -> set[ThreatType]:
    """Of the ``pending`` geographic and burst rules, those the product's
    day counters (AP27, written in every scan's transaction) show cannot
    raise: the days and hours they count hold every scan of the rule's
    window, and more, so a count under the threshold there is one in the
    window. This scan is counted in, stored yet or not."""
    days = _days(event, settings.lookback)
    params = [{"product_id": event.product_id, "day": day_key(day)} for day in days]
    items = await storage.batch_get(PRODUCT_ANALYTICS_DAY, params)
    counters = dict(zip(days, items, strict=True))
    ruled: set[ThreatType] = set()
    if _GEO in pending:
        # Newest first: the geographic window's days lead the lookback's.
        geo_days = len(_days(event, settings.geo_window))
        found: set[str | None] = {
            code for item in items[:geo_days] if item for code in countries_counted(item)
        }
        found.add(event.country)
        if sum(map(counts_as_country, found)) < settings.geo_min_countries:
            ruled.add(_GEO)
    if _BURST in pending:
        scans = 1 + sum(
            hour_count(item, hour.hour)
            for hour in _hours(event, settings.burst_window)
            if (item := counters[hour.date()])
        )
        if scans <= settings.burst_max_scans:
            ruled.add(_BURST)
    return ruled


def _known_rules(
    event: ScanEvent, settings: ThreatSettings, known: Container[AlertKey]
) -> set[ThreatType]:
    """The skippable rules whose alert for this scan is known to be stored.
    With ``KnownAlerts``, from the latest window known of each: the alert's
    key is never spelled (its window floored, its dataclass built and
    hashed, ~24,000 instructions a rule, three rules a scan event)."""
    if not isinstance(known, KnownAlerts):
        return {
            type_
            for type_ in _SKIPPABLE
            if scan_alert_key(type_, event.product, event.scanned_at, settings) in known
        }
    product, at = event.product, event.scanned_at
    found: set[ThreatType] = set()
    for type_ in _SKIPPABLE:
        start = known.latest(product.brand_id, product.product_id, type_)
        if start is not None and start <= at < start + scan_alert_window(type_, settings):
            found.add(type_)
    return found


async def _scan_drafts(
    storage: Storage, event: ScanEvent, settings: ThreatSettings, known: Container[AlertKey]
) -> list[AlertDraft]:
    skip = _known_rules(event, settings, known)
    pending = {_GEO, _BURST} - skip
    if pending and event.product.scan_count > _FEW_SCANS:
        skip |= await _ruled_out(storage, event, settings, pending)
    if _GEO not in skip:
        window: timedelta | None = settings.lookback
    else:
        window = None if _BURST in skip else settings.burst_window
    context = ScanContext(
        scan_id=event.scan_id,
        scanned_at=event.scanned_at,
        country=event.country,
        city=event.city,
        device_hash=event.device_hash,
        result=event.result,
        product=event.product,
        recent=() if window is None else await recent_scans(storage, event, window),
        claim=event.claim,
    )
    return evaluate_scan(context, settings, skip=skip)


async def alert_drafts(
    storage: Storage,
    event: OutboxEvent,
    settings: ThreatSettings,
    known: Container[AlertKey] = (),
) -> list[AlertDraft]:
    """The drafts ``event`` raises, but those whose alerts are ``known`` to
    be stored."""
    drafts = await _drafts(storage, event, settings, known)
    return [draft for draft in drafts if draft.key not in known]


async def _drafts(
    storage: Storage, event: OutboxEvent, settings: ThreatSettings, known: Container[AlertKey]
) -> list[AlertDraft]:
    match event:
        case ScanEvent():
            return await _scan_drafts(storage, event, settings, known)
        case RecallEvent():
            return [
                product_recall(
                    brand_id=event.brand_id,
                    product_id=event.product_id,
                    recalled_at=event.recalled_at,
                    reason=event.reason,
                )
            ]
        case DisputeEvent():
            return [
                ownership_dispute(
                    brand_id=event.brand_id,
                    product_id=event.product_id,
                    disputed_at=event.disputed_at,
                    reason=event.reason,
                    dispute_count=event.dispute_count,
                    settings=settings,
                )
            ]
        case AppendEvent():
            draft = chain_gap(
                brand_id=event.brand_id,
                product_id=event.product_id,
                sequence=event.sequence,
                occurred_at=event.occurred_at,
                previous_occurred_at=event.previous_occurred_at,
                settings=settings,
                country=event.country,
                city=event.city,
            )
            return [] if draft is None else [draft]
    return []
