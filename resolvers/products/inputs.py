"""RegisterProductInput, validated into a ``ProductDraft`` by the service."""

from __future__ import annotations

import strawberry

from ..types.scalars import JSON

__all__ = ["RegisterProductInput"]


@strawberry.input
class RegisterProductInput:
    brand_id: strawberry.ID
    name: str
    sku: str | None = None
    category: str | None = None
    description: str | None = None
    metadata: JSON | None = strawberry.field(
        default=None,
        description="A JSON object, at most 16 KB as canonical JSON. "
        "Numbers must be integers: send decimals as strings.",
    )
    gtin: str | None = strawberry.field(
        default=None,
        description="The GS1 GTIN (8, 12, 13 or 14 digits with a valid check digit; stored as "
        "GTIN-14). With a serial, the label carries the product's GS1 Digital Link URI.",
    )
    serial: str | None = strawberry.field(
        default=None,
        description="The unit's serial number (GS1 AI 21): 1 to 20 characters of GS1's "
        "character set 82; one product per GTIN and serial. Needs gtin.",
    )
    lot: str | None = strawberry.field(
        default=None, description="The batch or lot (GS1 AI 10), as a serial. Needs gtin."
    )
