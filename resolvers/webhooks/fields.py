"""Brand.webhooks (AP23) and Brand.webhookDeliveries (AP25)."""

from __future__ import annotations

from typing import Protocol

import strawberry

from services.webhooks.access import require_webhook_admin
from storage.access_patterns import BRAND_WEBHOOKS, WEBHOOK_DELIVERIES

from ..context import Info
from ..types.connection import Connection, connection
from .types import Webhook, WebhookDelivery

__all__ = ["brand_webhook_deliveries", "brand_webhooks"]


class BrandRoot(Protocol):
    @property
    def id(self) -> strawberry.ID: ...


async def brand_webhooks(root: BrandRoot, info: Info) -> list[Webhook] | None:
    brand_id = str(root.id)
    require_webhook_admin(info.context.principal, brand_id, "webhooks")
    page = await info.context.loaders.page(
        BRAND_WEBHOOKS, {"brand_id": brand_id}, first=BRAND_WEBHOOKS.max_page
    )
    return [Webhook.from_item(item) for item in page.items]


async def brand_webhook_deliveries(
    root: BrandRoot, info: Info, first: int | None = None, after: str | None = None
) -> Connection[WebhookDelivery] | None:
    """Newest first, with each delivery's status after its latest attempt."""
    brand_id = str(root.id)
    require_webhook_admin(info.context.principal, brand_id, "webhookDeliveries")
    page = await info.context.loaders.page(
        WEBHOOK_DELIVERIES, {"brand_id": brand_id}, first=first, after=after
    )
    return connection(page, WebhookDelivery.from_item)
