"""Alert drafts and their deterministic identity.

An alert is identified by (brand, product, type, window start). The window
start is the triggering time floored to the rule's dedupe window, so a retry of
the same scan, or any other scan in the same window, yields the same id, and a
conditional put of that id persists one alert per product, type and window.

The id is reversible: ``threat(id)`` must reach the item with a GetItem (AP13),
so the id carries the key parameters rather than a hash of them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TypeAlias

from domain.datetimes import format_datetime, parse_datetime
from domain.encoding import b64url_decode, b64url_encode
from domain.enums import Severity, ThreatType
from domain.errors import BadUserInput

__all__ = [
    "ALERT_ID_PREFIX",
    "SEVERITY_OF",
    "AlertDraft",
    "AlertKey",
    "JSONValue",
    "alert_id",
    "floor_time",
    "month_partition",
    "parse_alert_id",
    "severity_at_least",
]

JSONValue: TypeAlias = "str | int | bool | list[JSONValue] | dict[str, JSONValue] | None"

ALERT_ID_PREFIX = "thr_"
_ALERT_ID_MAX_CHARS = 2048
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

SEVERITY_OF: Mapping[ThreatType, Severity] = {
    ThreatType.GEOGRAPHIC_ANOMALY: Severity.HIGH,
    ThreatType.BURST_SCAN: Severity.MEDIUM,
    ThreatType.SCAN_VELOCITY: Severity.HIGH,
    ThreatType.CLAIMED_PRODUCT_SCAN: Severity.HIGH,
    ThreatType.HASH_TAMPERING: Severity.CRITICAL,
    ThreatType.RECALLED_PRODUCT_SCAN: Severity.LOW,
    ThreatType.CHAIN_GAP: Severity.MEDIUM,
    ThreatType.PRODUCT_RECALL: Severity.CRITICAL,
    ThreatType.OWNERSHIP_DISPUTE: Severity.CRITICAL,
}


def severity_at_least(severity: Severity, minimum: Severity) -> bool:
    return severity.at_least(minimum)


def floor_time(moment: datetime, window: timedelta | None) -> datetime:
    """The start of the epoch-aligned bucket holding ``moment``; ``None``: the moment."""
    offset = moment - _EPOCH
    if window is None:
        return _EPOCH + offset
    return _EPOCH + (offset // window) * window


def month_partition(moment: datetime) -> str:
    """``yyyy-mm`` in UTC: the monthly alert partition, so one brand under attack
    spreads over keys instead of hot-spotting one."""
    return format_datetime(moment)[:7]


@dataclass(frozen=True, slots=True)
class AlertKey:
    brand_id: str
    product_id: str
    type: ThreatType
    window_start: datetime

    @property
    def month(self) -> str:
        return month_partition(self.window_start)

    @property
    def id(self) -> str:
        parts = [self.brand_id, self.product_id, str(self.type), format_datetime(self.window_start)]
        body = json.dumps(parts, separators=(",", ":"), ensure_ascii=False).encode()
        return ALERT_ID_PREFIX + b64url_encode(body)


@dataclass(frozen=True, slots=True)
class AlertDraft:
    brand_id: str
    product_id: str
    type: ThreatType
    severity: Severity
    detected_at: datetime
    window_start: datetime
    details: Mapping[str, JSONValue] = field(default_factory=dict)
    country: str | None = None
    city: str | None = None

    @classmethod
    def raised(
        cls,
        type: ThreatType,
        *,
        brand_id: str,
        product_id: str,
        detected_at: datetime,
        window: timedelta | None,
        details: Mapping[str, JSONValue],
        country: str | None = None,
        city: str | None = None,
    ) -> AlertDraft:
        """The draft a rule raises at ``detected_at``, with its type's severity
        and the start of its dedupe ``window`` (None: no window, the moment)."""
        return cls(
            brand_id,
            product_id,
            type,
            SEVERITY_OF[type],
            detected_at,
            floor_time(detected_at, window),
            details,
            country,
            city,
        )

    @property
    def key(self) -> AlertKey:
        return AlertKey(self.brand_id, self.product_id, self.type, self.window_start)


def alert_id(alert: AlertDraft | AlertKey) -> str:
    key = alert.key if isinstance(alert, AlertDraft) else alert
    return key.id


def parse_alert_id(text: str) -> AlertKey:
    """Decode an id from a client; only the exact spelling ``alert_id`` produces
    is accepted, so one alert never has two ids."""
    invalid = BadUserInput("Invalid threat id", hint="Use a ThreatAlert.id returned by the API.")
    if not text.startswith(ALERT_ID_PREFIX) or len(text) > _ALERT_ID_MAX_CHARS:
        raise invalid
    raw = b64url_decode(text[len(ALERT_ID_PREFIX) :])
    if raw is None:
        raise invalid
    try:
        parts = json.loads(raw.decode("utf-8"))
    except ValueError:
        raise invalid from None
    if not (
        isinstance(parts, list)
        and len(parts) == 4
        and all(isinstance(part, str) and part for part in parts)
        and parts[2] in ThreatType.__members__
    ):
        raise invalid
    try:
        window_start = parse_datetime(parts[3])
    except BadUserInput:
        raise invalid from None
    key = AlertKey(parts[0], parts[1], ThreatType(parts[2]), window_start)
    if key.id != text:
        raise invalid
    return key
