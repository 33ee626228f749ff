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
