"""RegisterProductInput and the validated draft it becomes."""

from __future__ import annotations

from dataclasses import dataclass

import strawberry

from domain.canonical import JSONObject
from domain.validation import (
    CATEGORY,
    DESCRIPTION,
    PRODUCT_NAME,
    SKU,
    validate_id,
    validate_metadata,
)

from ..types.scalars import JSON
from .items import product_name_digest

__all__ = ["ProductDraft", "RegisterProductInput"]


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


@dataclass(frozen=True)
class ProductDraft:
    """A product as it will be stored and certified: validated, nothing altered."""

    brand_id: str
    name: str
    sku: str | None
    category: str | None
    description: str | None
    metadata: JSONObject

    @classmethod
    def validate(cls, data: RegisterProductInput, *, field: str) -> ProductDraft:
        return cls(
            brand_id=validate_id(data.brand_id, field=f"{field}.brandId"),
            name=PRODUCT_NAME(data.name, field=f"{field}.name"),
            sku=SKU.optional(data.sku, field=f"{field}.sku"),
            category=CATEGORY.optional(data.category, field=f"{field}.category"),
            description=DESCRIPTION.optional(data.description, field=f"{field}.description"),
            metadata=validate_metadata(data.metadata, field=f"{field}.metadata"),
        )

    @property
    def name_digest(self) -> str:
        return product_name_digest(self.name, self.sku)
