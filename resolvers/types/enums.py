"""The contract's enums as GraphQL enums, registered once.

The domain defines them (values equal names); here they only gain a GraphQL
name, so every module that exposes one shares the same schema type.
"""

from __future__ import annotations

from enum import StrEnum

import strawberry

from domain.enums import (
    EventSource,
    IntegrationType,
    Plan,
    ProductStatus,
    ProvenanceEventType,
    ScanResult,
    Severity,
    ThreatType,
)

__all__ = [
    "ApiKeyRole",
    "EventSource",
    "IntegrationType",
    "Plan",
    "ProductStatus",
    "ProvenanceEventType",
    "ScanResult",
    "Severity",
    "ThreatType",
]

# strawberry.enum marks the class itself, so the names above are both the
# domain's enums and the schema's.
for _enum in (Plan, ProductStatus, ProvenanceEventType, ScanResult, Severity, ThreatType):
    strawberry.enum(_enum)
strawberry.enum(
    IntegrationType,
    description="A partner's kind; it fixes the source of the events it ingests "
    "(CARRIER: SHIPPING, WAREHOUSE: WAREHOUSE, POINT_OF_SALE: POS, CUSTOM: CUSTOM)",
)
strawberry.enum(
    EventSource,
    description="Which kind of partner integration appended an event; hashed with the event",
)


@strawberry.enum(description="What an API key may do: BRAND writes, PARTNER only reads")
class ApiKeyRole(StrEnum):
    BRAND = "BRAND"
    PARTNER = "PARTNER"
