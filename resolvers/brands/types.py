"""The Brand type, its counters, and the fields that read its products
(AP07), threats (AP12), webhooks (AP23), webhook deliveries (AP25) and
partner integrations (AP30)."""

from __future__ import annotations

from datetime import date, datetime
from typing import TYPE_CHECKING, Annotated

import strawberry

from domain.datetimes import parse_datetime
from domain.enums import Plan, Severity
from services.brands.items import STAT_COUNTERS
from services.ingest.access import require_integration_admin
from services.visibility import require_owner
from services.webhooks.access import require_webhook_admin
from storage import Item
from storage.access_patterns import (
    BRAND_INTEGRATIONS,
    BRAND_PRODUCTS,
    BRAND_STATS,
    BRAND_THREATS,
    BRAND_WEBHOOKS,
    PRODUCT_BY_ID,
    WEBHOOK_DELIVERIES,
)

from ..analytics.types import BrandAnalytics, analytics_range
from ..context import Info
from ..fields import ap_field, computed_field
from ..ingest.types import Integration
from ..ledger.types import Ledger
from ..node.types import Node
from ..stored import stored, stored_values
from ..threats.paging import THREATS_EPOCH, severe_threats
from ..threats.types import ThreatAlert
from ..types.connection import Connection, connection, stored_connection
from ..types.scalars import DateTime
from ..webhooks.types import Webhook, WebhookDelivery

if TYPE_CHECKING:
    from ..products.types import Product

__all__ = ["Brand", "BrandStats"]

_Product = Annotated["Product", strawberry.lazy("resolvers.products.types")]


@strawberry.type(description="Atomic counters, updated with ADD by the writes that change them")
class BrandStats:
    product_count: int
    scan_count: int
    threat_count: int
    open_threat_count: int

    @classmethod
    def from_item(cls, item: Item | None) -> BrandStats:
        values = item or {}
        product_count, scan_count, threat_count, open_threat_count = (
            int(values.get(n, 0)) for n in STAT_COUNTERS
        )
        return cls(
            product_count=product_count,
            scan_count=scan_count,
            threat_count=threat_count,
            open_threat_count=open_threat_count,
        )


@strawberry.type(
    description="A brand. id, name, domain, industry and createdAt are public; "
    "the other fields need one of the brand's own keys."
)
class Brand(Node):
    id: strawberry.ID = stored("id")
    name: str = stored("name")
    domain: str = stored("domain")
    industry: str | None = stored("industry", optional=True)
    created_at: DateTime = stored("createdAt", convert=parse_datetime)
    _item: strawberry.Private[Item]

    @classmethod
    def from_item(cls, item: Item) -> Brand:
        return cls(**stored_values(cls, item), _item=item)

    @computed_field
    def plan(self, info: Info) -> Plan | None:
        require_owner(info.context.principal, self.id, "plan")
        return Plan(self._item["plan"])

    @ap_field(BRAND_STATS)
    async def stats(self, info: Info) -> BrandStats | None:
        require_owner(info.context.principal, self.id, "stats")
        return BrandStats.from_item(await info.context.loaders.item(BRAND_STATS, brand_id=self.id))

    @computed_field(
        description="Scans, verdicts, countries and threats per UTC day from `from` to `to` "
        "(both included, at most 92 days), and products by status; the brand's keys only"
    )
    def analytics(
        self, info: Info, start: Annotated[date, strawberry.argument(name="from")], to: date
    ) -> BrandAnalytics | None:
        require_owner(info.context.principal, self.id, "analytics")
        first, last = analytics_range(start, to)
        return BrandAnalytics(brand_id=self.id, start=first, end=last)

    @ap_field(BRAND_PRODUCTS, description="The brand's products, newest first")
    async def products(
        self, info: Info, first: int | None = None, after: str | None = None
    ) -> Connection[_Product] | None:
        from ..products.types import Product

        require_owner(info.context.principal, self.id, "products")
        loaders = info.context.loaders
        page = await loaders.page(BRAND_PRODUCTS, {"brand_id": self.id}, first=first, after=after)
        loaders.hold_page(PRODUCT_BY_ID, page.items, param="product_id", attribute="id")
        return stored_connection(page, Product)

    @computed_field(description="The brand's credits; the operator and the brand's BRAND keys only")
    def ledger(self, info: Info) -> Ledger | None:
        return Ledger.of(info.context.principal, self.id)

    @ap_field(BRAND_THREATS, description="Threat alerts, newest first; the brand's keys only")
    async def threats(
        self,
        info: Info,
        first: int | None = None,
        after: str | None = None,
        since: datetime | None = None,
        min_severity: Severity | None = None,
    ) -> Connection[ThreatAlert] | None:
        """Alerts recorded at or after ``since``. Pass the same ``since`` with ``after``."""
        require_owner(info.context.principal, self.id, "threats")
        params = {"brand_id": str(self.id), "since": since or THREATS_EPOCH}
        if min_severity is None:
            page = await info.context.loaders.page(BRAND_THREATS, params, first=first, after=after)
            return connection(page, ThreatAlert.from_item)
        return await severe_threats(info.context.loaders, params, first, after, min_severity)

    @ap_field(BRAND_WEBHOOKS, description="The brand's BRAND keys only")
    async def webhooks(self, info: Info) -> list[Webhook] | None:
        require_webhook_admin(info.context.principal, self.id, "webhooks")
        page = await info.context.loaders.page(
            BRAND_WEBHOOKS, {"brand_id": str(self.id)}, first=BRAND_WEBHOOKS.max_page
        )
        return [Webhook.from_item(item) for item in page.items]

    @ap_field(
        WEBHOOK_DELIVERIES,
        description="Webhook deliveries, newest first, with their status; "
        "the brand's BRAND keys only",
    )
    async def webhook_deliveries(
        self, info: Info, first: int | None = None, after: str | None = None
    ) -> Connection[WebhookDelivery] | None:
        """With each delivery's status after its latest attempt."""
        require_webhook_admin(info.context.principal, self.id, "webhookDeliveries")
        page = await info.context.loaders.page(
            WEBHOOK_DELIVERIES, {"brand_id": str(self.id)}, first=first, after=after
        )
        return connection(page, WebhookDelivery.from_item)

    @ap_field(
        BRAND_INTEGRATIONS,
        description="Partner integrations, newest first, revoked ones included; "
        "the brand's BRAND keys only",
    )
    async def integrations(
        self, info: Info, first: int | None = None, after: str | None = None
    ) -> Connection[Integration] | None:
        require_integration_admin(info.context.principal, self.id, "integrations")
        page = await info.context.loaders.page(
            BRAND_INTEGRATIONS, {"brand_id": str(self.id)}, first=first, after=after
        )
        return connection(page, Integration.from_item)
