"""From an outbox event to the alert drafts the threat rules raise.

The rules are pure (``domain.threats``); this module only gathers
their inputs. A scan event already carries the product and claim as the scan
transaction read them; the product's recent scans come from AP10, read up to
the scan's own time so a late reprocessing reaches the same verdict.
"""

from __future__ import annotations

from datetime import timedelta

from domain.datetimes import parse_datetime
from domain.threats import (
    AlertDraft,
    RecentScan,
    ScanContext,
    ThreatSettings,
    chain_gap,
    evaluate_scan,
    ownership_dispute,
    product_recall,
)
from services.paging import query_all
from services.pipeline.events import AppendEvent, DisputeEvent, OutboxEvent, RecallEvent, ScanEvent
from services.pipeline.live.tailer import PIPELINE_TENANT
from storage import Item, Storage
from storage.access_patterns import PRODUCT_SCANS

__all__ = ["RECENT_SCANS_MAX", "alert_drafts", "recent_scans"]

RECENT_SCANS_MAX = 1000
"""Enough to decide every rule: past this many scans in the lookback window a
burst has long been raised, and more reading would only slow the relay."""
_MICROSECOND = timedelta(microseconds=1)


def _recent(item: Item) -> RecentScan:
    return RecentScan(
        parse_datetime(item["scannedAt"]),
        item.get("country"),
        item.get("deviceHash"),
        item.get("id"),
    )


async def recent_scans(
    storage: Storage, event: ScanEvent, settings: ThreatSettings
) -> list[RecentScan]:
    params = {
        "product_id": event.product_id,
        "start": event.scanned_at - settings.lookback,
        "end": event.scanned_at + _MICROSECOND,
    }
    items = await query_all(
        storage, PRODUCT_SCANS, params, tenant=PIPELINE_TENANT, limit=RECENT_SCANS_MAX
    )
    return [_recent(item) for item in items]


async def alert_drafts(
    storage: Storage, event: OutboxEvent, settings: ThreatSettings
) -> list[AlertDraft]:
    match event:
        case ScanEvent():
            context = ScanContext(
                scan_id=event.scan_id,
                scanned_at=event.scanned_at,
                country=event.country,
                city=event.city,
                device_hash=event.device_hash,
                result=event.result,
                product=event.product,
                recent=await recent_scans(storage, event, settings),
                claim=event.claim,
            )
            return evaluate_scan(context, settings)
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
