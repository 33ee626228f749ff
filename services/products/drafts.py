"""A product as registration will store and certify it: validated input."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from domain.canonical import JSONObject
from domain.validation import (
    CATEGORY,
    DESCRIPTION,
    PRODUCT_NAME,
    SKU,
    validate_id,
    validate_metadata,
)

from .items import product_name_digest

__all__ = ["ProductDraft", "ProductFields"]


class ProductFields(Protocol):
    """The fields of a product as a client sends them (``RegisterProductInput``)."""

    @property
    def brand_id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def sku(self) -> str | None: ...
    @property
    def category(self) -> str | None: ...
    @property
    def description(self) -> str | None: ...
    @property
    def metadata(self) -> object | None: ...


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
    def validate(cls, data: ProductFields, *, field: str) -> ProductDraft:
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
