"""How threat alerts are stored.

``THREAT#<brand>#<yyyy-mm>`` / ``ALERT#<window>#<type>#<product>`` (AP13) is
the alert's deterministic key, so a conditional create persists one alert per
product, type and window however often a scan is reprocessed. The month is
the window's, spreading a brand under attack over monthly partitions.

On GSI1 an alert sits under ``BRAND#<brand>`` / ``THREAT#<recordedAt>#...``
(AP12). ``recordedAt`` is when the relay wrote it, not when it was detected:
readers that resume "after" an alert (subscriptions, the tailer) need the
order in which alerts became visible, and a late retry of an old scan must
still reach them. A commit that lands later than the readers' overlap allows
is moved forward after it (``restamp``; docs/design.md, "Late commits").
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from domain.datetimes import format_datetime, parse_datetime
from domain.enums import Severity, ThreatType
from domain.threats import AlertDraft, AlertKey, parse_alert_id
from domain.threats.filters import AlertFacts
from services.analytics.counters import alert_counter_updates
from storage import Compare, Comparison, Item, ItemAbsent, Key, KeyTemplate, Put, Update
from storage.access_patterns import BRAND_STATS, BRAND_THREATS, THREAT_BY_ID

__all__ = [
    "ALERT_SORT",
    "alert_facts",
    "alert_item",
    "alert_key",
    "alert_key_params",
    "alert_matches",
    "alert_puts",
    "params_from_id",
    "recorded_sort",
    "restamp",
]

ALERT_SORT = KeyTemplate("THREAT#{recorded_at:time}#{threat_type}#{product_id}#{window_start:time}")


def alert_key_params(key: AlertKey) -> dict[str, Any]:
    return {
        "brand_id": key.brand_id,
        "month": key.month,
        "detected_at": key.window_start,
        "threat_type": key.type.value,
        "product_id": key.product_id,
    }


def alert_key(key: AlertKey) -> Key:
    return THREAT_BY_ID.key(**alert_key_params(key))


def params_from_id(alert_id: str) -> dict[str, Any]:
    """AP13's parameters for a client-supplied id (BAD_USER_INPUT if malformed)."""
    return alert_key_params(parse_alert_id(alert_id))


def recorded_sort(recorded_at: datetime, key: AlertKey) -> str:
    return ALERT_SORT.format(
        {
            "recorded_at": recorded_at,
            "threat_type": key.type.value,
            "product_id": key.product_id,
            "window_start": key.window_start,
        }
    )


def alert_item(draft: AlertDraft, recorded_at: datetime) -> Item:
    key = draft.key
    primary = alert_key(key)
    return {
        "PK": primary.pk,
        "SK": primary.sk,
        "GSI1PK": BRAND_THREATS.partition_key.format({"brand_id": draft.brand_id}),
        "GSI1SK": recorded_sort(recorded_at, key),
        "entity": "ThreatAlert",
        "id": key.id,
        "brandId": draft.brand_id,
        "productId": draft.product_id,
        "type": draft.type.value,
        "severity": draft.severity.value,
        "details": dict(draft.details),
        "country": draft.country,
        "city": draft.city,
        "detectedAt": format_datetime(draft.detected_at),
        "windowStart": format_datetime(draft.window_start),
        "recordedAt": format_datetime(recorded_at),
        "resolved": False,
    }


def restamp(item: Item, recorded_at: datetime) -> tuple[Item, Update]:
    """The alert at a later place in AP12, and the write that moves it there
    if nobody else has since."""
    sort = ALERT_SORT.format({**ALERT_SORT.parse(item["GSI1SK"]), "recorded_at": recorded_at})
    moved = {**item, "GSI1SK": sort, "recordedAt": format_datetime(recorded_at)}
    update = Update(
        Key(item["PK"], item["SK"]),
        set={"GSI1SK": sort, "recordedAt": moved["recordedAt"]},
        condition=Compare("GSI1SK", Comparison.EQ, item["GSI1SK"]),
    )
    return moved, update


def alert_puts(item: Item) -> list[Put | Update]:
    """The alert and the counters it moves, to commit together: the alert is
    created at most once, so the counters rise by exactly the alerts created
    (threats per type per day too: docs/design.md, "Analytics")."""
    stats = BRAND_STATS.key(brand_id=item["brandId"])
    return [
        Put(item, ItemAbsent()),
        Update(stats, add={"threatCount": 1, "openThreatCount": 1}),
        *alert_counter_updates(
            brand_id=item["brandId"],
            product_id=item["productId"],
            alert_id=item["id"],
            detected_at=parse_datetime(item["detectedAt"]),
            threat=ThreatType(item["type"]),
        ),
    ]


def alert_facts(item: Mapping[str, Any]) -> AlertFacts:
    """What a filter looks at in a stored alert."""
    return AlertFacts(
        item["productId"], item.get("country"), ThreatType(item["type"]), Severity(item["severity"])
    )


def alert_matches(
    item: Mapping[str, Any], *, min_severity: Severity | None, types: frozenset[ThreatType] | None
) -> bool:
    if min_severity is not None and not Severity(item["severity"]).at_least(min_severity):
        return False
    return types is None or ThreatType(item["type"]) in types
