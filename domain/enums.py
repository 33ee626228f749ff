"""The enums of the GraphQL contract (docs/design.md, GraphQL contract).

Values equal names so that stored attributes, GraphQL enum values and the
canonical forms that third parties hash all spell a member the same way.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "SEVERITY_ORDER",
    "EventSource",
    "IntegrationType",
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


class IntegrationType(StrEnum):
    """What kind of partner an integration is; it fixes the ``source`` of the
    events it appends (``EventSource.of``)."""

    CARRIER = "CARRIER"
    WAREHOUSE = "WAREHOUSE"
    POINT_OF_SALE = "POINT_OF_SALE"
    CUSTOM = "CUSTOM"


class EventSource(StrEnum):
    """Who appended a provenance event through partner ingest; events the
    brand appends itself have none."""

    SHIPPING = "SHIPPING"
    WAREHOUSE = "WAREHOUSE"
    POS = "POS"
    CUSTOM = "CUSTOM"

    @classmethod
    def of(cls, integration: IntegrationType) -> EventSource:
        return _SOURCES[integration]

    @property
    def path(self) -> str:
        """The ``/ingest/<path>`` a partner of this source posts to."""
        return self.value.lower()


_SOURCES = {
    IntegrationType.CARRIER: EventSource.SHIPPING,
    IntegrationType.WAREHOUSE: EventSource.WAREHOUSE,
    IntegrationType.POINT_OF_SALE: EventSource.POS,
    IntegrationType.CUSTOM: EventSource.CUSTOM,
}


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
