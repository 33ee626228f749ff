"""The contract's enums as GraphQL enums, registered once.

The domain defines them (values equal names); here they only gain a GraphQL
name, so every module that exposes one shares the same schema type.
"""

from __future__ import annotations

from enum import StrEnum

import strawberry

from domain.enums import (
    Plan,
    ProductStatus,
    ProvenanceEventType,
    ScanResult,
    Severity,
    ThreatType,
)

__all__ = [
    "ApiKeyRole",
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


@strawberry.enum(description="What an API key may do: BRAND writes, PARTNER only reads")
class ApiKeyRole(StrEnum):
    BRAND = "BRAND"
    PARTNER = "PARTNER"
