"""The counter updates that commit with the scans, alerts and status changes
they count (docs/design.md, "Analytics").

Counted in the writer's own transaction rather than by the relay: a count can
then never lag, double or miss what it counts, at the price of one or two
more items per scan transaction. Brand days are write-sharded
(``domain.analytics.BRAND_SHARDS``); a product's day is one item, as one
product is not scanned at a rate that needs more.
"""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache

from domain.analytics import alert_counters, day_key, scan_counters, shard_of
from domain.enums import ProductStatus, ScanResult, ThreatType
from storage import Key, Update
from storage.access_patterns import BRAND_ANALYTICS_DAY, BRAND_STATS, PRODUCT_ANALYTICS_DAY

__all__ = ["STATUS_PREFIX", "alert_counter_updates", "scan_counter_updates", "status_change"]

STATUS_PREFIX = "status_"
_ENTITY = {"entity": "AnalyticsDay"}
_BRAND_DAY = BRAND_ANALYTICS_DAY.partition_key
_PRODUCT_DAY = PRODUCT_ANALYTICS_DAY.partition_key
_DAY_SORT = PRODUCT_ANALYTICS_DAY.sort_key.template


_SHAPE_KEY = Key("ANALYTICS#SHAPE", "DAY#SHAPE")
"""Where a day-counter shape is built; ``Update.at`` moves it to real keys."""
DAY_SHAPES = 1024
"""Day-counter updates remembered by their counters: a scan's are one of
24 hours x its result x its country, an alert's one of the threat types."""


@lru_cache(maxsize=DAY_SHAPES)
def _day_shape(counters: tuple[tuple[str, int], ...]) -> Update:
    """The day items' update for these counters, built (and checked) once
    per shape and moved onto each day's keys (``Update.at``)."""
    return Update(_SHAPE_KEY, add=dict(counters), set_if_absent=_ENTITY)


_scan_shapes: dict[tuple[int, str | None, ScanResult], Update] = {}
"""A scan's day-counter update by what its counters depend on (hour, country,
result): its counters are then neither spelled (three f-strings) nor looked
up by their items on every scan. At most ``DAY_SHAPES``, emptied when full;
country is validated against the known codes."""


def _scan_shape(scanned_at: datetime, country: str | None, result: ScanResult) -> Update:
    key = (scanned_at.hour, country, result)
    shape = _scan_shapes.get(key)
    if shape is None:
        shape = _day_shape(tuple(scan_counters(scanned_at, country, result).items()))
        if len(_scan_shapes) >= DAY_SHAPES:
            _scan_shapes.clear()
        _scan_shapes[key] = shape
    return shape


def _days(
    brand_id: str, product_id: str, event_id: str, moment: datetime, shape: Update
) -> list[Update]:
    sort = _DAY_SORT.format({"day": day_key(moment)})
    brand = Key(_BRAND_DAY.format({"brand_id": brand_id, "shard": str(shard_of(event_id))}), sort)
    product = Key(_PRODUCT_DAY.format({"product_id": product_id}), sort)
    return [shape.at(brand), shape.at(product)]


def scan_counter_updates(
    *,
    brand_id: str,
    product_id: str,
    scan_id: str,
    scanned_at: datetime,
    country: str | None,
    result: ScanResult,
) -> list[Update]:
    shape = _scan_shape(scanned_at, country, result)
    return _days(brand_id, product_id, scan_id, scanned_at, shape)


def alert_counter_updates(
    *, brand_id: str, product_id: str, alert_id: str, detected_at: datetime, threat: ThreatType
) -> list[Update]:
    shape = _day_shape(tuple(alert_counters(threat).items()))
    return _days(brand_id, product_id, alert_id, detected_at, shape)


def status_change(
    brand_id: str, before: ProductStatus | None, after: ProductStatus, count: int = 1
) -> Update:
    """Products by status on the brand's STATS item (AP03): the count moves
    in the transaction that moves the products."""
    add = {f"{STATUS_PREFIX}{after.value}": count}
    if before is not None:
        add[f"{STATUS_PREFIX}{before.value}"] = -count
    return Update(BRAND_STATS.key(brand_id=brand_id), add=add)
