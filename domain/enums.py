"""The enums of the GraphQL contract (docs/design.md, GraphQL contract).

Values equal names so that stored attributes, GraphQL enum values and the
canonical forms that third parties hash all spell a member the same way.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "SEVERITY_ORDER",
    "Plan",
    "ProductStatus",
    "ProvenanceEventType",
    "ScanResult",
    "Severity",
    "ThreatType",
]


class Plan(StrEnum):
    FREE = "FREE"
    PRO = "PRO"
    ENTERPRISE = "ENTERPRISE"


class ProductStatus(StrEnum):
    ACTIVE = "ACTIVE"
    TRANSFERRED = "TRANSFERRED"
    RECALLED = "RECALLED"
    FLAGGED = "FLAGGED"


class ProvenanceEventType(StrEnum):
    MANUFACTURED = "MANUFACTURED"
    SHIPPED = "SHIPPED"
    RECEIVED = "RECEIVED"
    INSPECTED = "INSPECTED"
    SOLD = "SOLD"
    TRANSFERRED = "TRANSFERRED"
    RECALLED = "RECALLED"
    CUSTOM = "CUSTOM"


class ScanResult(StrEnum):
    AUTHENTIC = "AUTHENTIC"
    SUSPICIOUS = "SUSPICIOUS"
    COUNTERFEIT = "COUNTERFEIT"
    UNKNOWN = "UNKNOWN"


class ThreatType(StrEnum):
    GEOGRAPHIC_ANOMALY = "GEOGRAPHIC_ANOMALY"
    BURST_SCAN = "BURST_SCAN"
    SCAN_VELOCITY = "SCAN_VELOCITY"
    CLAIMED_PRODUCT_SCAN = "CLAIMED_PRODUCT_SCAN"
    HASH_TAMPERING = "HASH_TAMPERING"
    RECALLED_PRODUCT_SCAN = "RECALLED_PRODUCT_SCAN"
    CHAIN_GAP = "CHAIN_GAP"
    PRODUCT_RECALL = "PRODUCT_RECALL"
    OWNERSHIP_DISPUTE = "OWNERSHIP_DISPUTE"


class Severity(StrEnum):
    """Declared from least to most severe; compare with ``SEVERITY_ORDER``.

    StrEnum members compare as strings ("HIGH" < "LOW"), so ordering by
    severity must go through the rank, never ``<`` on members.
    """

    LOW = "LOW"
    MEDIUM = "MEDIUM"
    HIGH = "HIGH"
    CRITICAL = "CRITICAL"

    @property
    def rank(self) -> int:
        return SEVERITY_ORDER[self]

    def at_least(self, minimum: Severity) -> bool:
        return self.rank >= minimum.rank


SEVERITY_ORDER: dict[Severity, int] = {severity: rank for rank, severity in enumerate(Severity)}
