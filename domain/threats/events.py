"""Threat rules raised by commands rather than by scans.

These take the facts the command already holds; the command persists the
draft in the same transaction as its own writes, so the alert exists exactly
when the event does.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from domain.datetimes import format_datetime
from domain.enums import ThreatType

from .alerts import AlertDraft, JSONValue
from .settings import ThreatSettings

__all__ = ["chain_gap", "ownership_dispute", "product_recall"]

_SECOND = timedelta(seconds=1)


def chain_gap(
    *,
    brand_id: str,
    product_id: str,
    sequence: int,
    occurred_at: datetime,
    previous_occurred_at: datetime | None,
    settings: ThreatSettings | None = None,
    country: str | None = None,
    city: str | None = None,
) -> AlertDraft | None:
    """Keyed by the event's own time: appends never go back in time, so each
    gap has its own instant and raises its own alert."""
    settings = settings or ThreatSettings()
    if previous_occurred_at is None:
        return None
    gap = occurred_at - previous_occurred_at
    if gap <= settings.chain_gap_max:
        return None
    details: dict[str, JSONValue] = {
        "sequence": sequence,
        "occurredAt": format_datetime(occurred_at),
        "previousOccurredAt": format_datetime(previous_occurred_at),
        "gapSeconds": gap // _SECOND,
        "maxGapSeconds": settings.chain_gap_max // _SECOND,
    }
    return AlertDraft.raised(
        ThreatType.CHAIN_GAP,
        brand_id=brand_id,
        product_id=product_id,
        detected_at=occurred_at,
        window=None,
        details=details,
        country=country,
        city=city,
    )


def product_recall(
    *, brand_id: str, product_id: str, recalled_at: datetime, reason: str | None
) -> AlertDraft:
    """A product is recalled at most once, so the recall time is its window."""
    return AlertDraft.raised(
        ThreatType.PRODUCT_RECALL,
        brand_id=brand_id,
        product_id=product_id,
        detected_at=recalled_at,
        window=None,
        details={"reason": reason},
    )


def ownership_dispute(
    *,
    brand_id: str,
    product_id: str,
    disputed_at: datetime,
    reason: str | None,
    dispute_count: int,
    settings: ThreatSettings | None = None,
) -> AlertDraft:
    """Details carry the disputer's reason and the count, never the claimant."""
    settings = settings or ThreatSettings()
    return AlertDraft.raised(
        ThreatType.OWNERSHIP_DISPUTE,
        brand_id=brand_id,
        product_id=product_id,
        detected_at=disputed_at,
        window=settings.dispute_dedupe,
        details={"reason": reason, "disputeCount": dispute_count},
    )
