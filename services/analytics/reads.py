"""Reading analytics: a range of days is a batch of gets, never a query over
scans (docs/design.md, "Analytics")."""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING

from domain.analytics import BRAND_SHARDS, Summary, day_key, days_in, summarize
from domain.enums import ProductStatus
from storage.access_patterns import BRAND_ANALYTICS_DAY, BRAND_STATS, PRODUCT_ANALYTICS_DAY

from .counters import STATUS_PREFIX

if TYPE_CHECKING:
    from ..context import Reads

__all__ = ["brand_summary", "product_summary", "status_counts"]


async def brand_summary(reads: Reads, brand_id: str, start: date, end: date) -> Summary:
    """Every shard of every day in one batch (BatchGetItem, 100 keys a call)."""
    days = days_in(start, end)
    keys = [(day, shard) for day in days for shard in range(BRAND_SHARDS)]
    params = [{"brand_id": brand_id, "shard": str(s), "day": day_key(d)} for d, s in keys]
    items = await reads.items(BRAND_ANALYTICS_DAY, params)
    found = [(day, item) for (day, _), item in zip(keys, items, strict=True) if item is not None]
    return summarize(days, found)


async def product_summary(reads: Reads, product_id: str, start: date, end: date) -> Summary:
    days = days_in(start, end)
    params = [{"product_id": product_id, "day": day_key(day)} for day in days]
    items = await reads.items(PRODUCT_ANALYTICS_DAY, params)
    found = [(day, item) for day, item in zip(days, items, strict=True) if item is not None]
    return summarize(days, found)


async def status_counts(reads: Reads, brand_id: str) -> dict[ProductStatus, int]:
    stats = await reads.item(BRAND_STATS, brand_id=brand_id) or {}
    return {
        status: max(0, int(stats.get(f"{STATUS_PREFIX}{status.value}", 0)))
        for status in ProductStatus
    }
