"""Threat rules: pure functions from facts about a scan or command to alert drafts."""

from __future__ import annotations

from .alerts import (
    ALERT_ID_PREFIX,
    SEVERITY_OF,
    AlertDraft,
    AlertKey,
    JSONValue,
    alert_id,
    floor_time,
    month_partition,
    parse_alert_id,
    severity_at_least,
)
from .events import chain_gap, ownership_dispute, product_recall
from .rules import (
    SCAN_RULES,
    SCAN_RULES_BY_TYPE,
    ClaimFacts,
    ProductFacts,
    RecentScan,
    ScanContext,
    ScanRule,
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
from .settings import ThreatSettings

__all__ = [
    "ALERT_ID_PREFIX",
    "SCAN_RULES",
    "SCAN_RULES_BY_TYPE",
    "SEVERITY_OF",
    "AlertDraft",
    "AlertKey",
    "ClaimFacts",
    "JSONValue",
    "ProductFacts",
    "RecentScan",
    "ScanContext",
    "ScanRule",
    "ThreatSettings",
    "alert_id",
    "burst_scan",
    "chain_gap",
    "claimed_product_scan",
    "counts_as_country",
    "evaluate_scan",
    "floor_time",
    "geographic_anomaly",
    "hash_tampering",
    "month_partition",
    "ownership_dispute",
    "parse_alert_id",
    "product_recall",
    "recalled_product_scan",
    "scan_alert_key",
    "scan_velocity",
    "severity_at_least",
]
