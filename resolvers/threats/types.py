"""The ThreatAlert type."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated

import strawberry
from strawberry.scalars import JSON

from domain.datetimes import parse_datetime
from domain.enums import Severity, ThreatType
from domain.errors import NotFound, ProofgateError
from storage import Item
from storage.access_patterns import BRAND_BY_ID, PRODUCT_BY_ID

from ..context import Info
from ..fields import ap_field, computed_field
from ..node.types import Node
from ..types import enums as _enums  # noqa: F401  (registers the GraphQL enums)

if TYPE_CHECKING:
    from ..brands.types import Brand
    from ..products.types import Product

__all__ = ["ThreatAlert"]

_Brand = Annotated["Brand", strawberry.lazy("resolvers.brands.types")]
_Product = Annotated["Product", strawberry.lazy("resolvers.products.types")]


@strawberry.type(
    description="A threat the pipeline detected. One alert per product, type and rule "
    "window: a retry or a second scan in the same window never raises another."
)
class ThreatAlert(Node):
    id: strawberry.ID
    type: ThreatType
    severity: Severity
    details: JSON
    country: str | None
    city: str | None
    detected_at: datetime
    resolved: bool
    resolved_at: datetime | None
    _item: strawberry.Private[Item]

    @classmethod
    def from_item(cls, item: Item) -> ThreatAlert:
        resolved_at = item.get("resolvedAt")
        return cls(
            id=strawberry.ID(item["id"]),
            type=ThreatType(item["type"]),
            severity=Severity(item["severity"]),
            details=JSON(item.get("details") or {}),
            country=item.get("country"),
            city=item.get("city"),
            detected_at=parse_datetime(item["detectedAt"]),
            resolved=bool(item.get("resolved")),
            resolved_at=None if resolved_at is None else parse_datetime(resolved_at),
            _item=item,
        )

    @property
    def brand_id(self) -> str:
        brand_id: str = self._item["brandId"]
        return brand_id

    @computed_field(
        description="This alert's position among its brand's alerts: the edge cursor of "
        "Brand.threats, and what threatAlerts(after:) resumes from"
    )
    def cursor(self, info: Info) -> str:
        pipeline = info.context.services.pipeline
        if pipeline is None:
            raise ProofgateError("The threat pipeline is not running")
        return pipeline.cursor(self._item, info.context.principal.tenant)

    @ap_field(BRAND_BY_ID)
    async def brand(self, info: Info) -> _Brand:
        from ..brands.types import Brand

        item = await info.context.loaders.item(BRAND_BY_ID, brand_id=self.brand_id)
        if item is None:
            raise ProofgateError(f"Threat {self.id} names a brand that does not exist")
        return Brand.from_item(item)

    @ap_field(PRODUCT_BY_ID)
    async def product(self, info: Info) -> _Product:
        from ..products.types import Product

        # Within the alert's own brand: an alert from Redis is only as
        # trustworthy as the channel key, and its subscriber may read this
        # brand's products only (docs/design.md, Alerts across processes).
        item = await info.context.loaders.item(PRODUCT_BY_ID, product_id=self._item["productId"])
        if item is None or item.get("brandId") != self.brand_id:
            raise NotFound(f"Threat {self.id} names no product of its brand")
        return Product.from_item(item)
