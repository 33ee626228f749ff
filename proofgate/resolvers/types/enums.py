"""The contract's enums as GraphQL enums, registered once.

The domain defines them (values equal names); here they only gain a GraphQL
name, so every module that exposes one shares the same schema type.
"""

from __future__ import annotations

from enum import StrEnum

import strawberry

from proofgate.domain import enums

__all__ = [
    "ApiKeyRole",
    "Plan",
    "ProductStatus",
    "ProvenanceEventType",
    "ScanResult",
    "Severity",
    "ThreatType",
]

Plan = strawberry.enum(enums.Plan, name="Plan")
ProductStatus = strawberry.enum(enums.ProductStatus, name="ProductStatus")
ProvenanceEventType = strawberry.enum(enums.ProvenanceEventType, name="ProvenanceEventType")
ScanResult = strawberry.enum(enums.ScanResult, name="ScanResult")
ThreatType = strawberry.enum(enums.ThreatType, name="ThreatType")
Severity = strawberry.enum(enums.Severity, name="Severity")


@strawberry.enum(description="What an API key may do: BRAND writes, PARTNER only reads")
class ApiKeyRole(StrEnum):
    BRAND = "BRAND"
    PARTNER = "PARTNER"
