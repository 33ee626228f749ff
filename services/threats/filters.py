"""A client's alert filter, checked against the table: every product it
names must be one of the brand's (docs/design.md, Alert filters).

An unknown product and another brand's get the same answer, so a filter is
no way to learn which product ids exist.
"""

from __future__ import annotations

from domain.errors import BadUserInput
from domain.threats.filters import AlertFilter
from storage import Storage
from storage.access_patterns import PRODUCT_BY_ID
from storage.limits import BATCH_GET_MAX_KEYS

__all__ = ["FILTER_CHECK_BATCH", "WEBHOOK_MAX_PRODUCT_IDS", "check_products"]

FILTER_CHECK_BATCH = BATCH_GET_MAX_KEYS
"""Product ids read per BatchGetItem when a filter is checked: what the
planned cost counts (``api.limits.field_cost``)."""
WEBHOOK_MAX_PRODUCT_IDS = 1_000
"""A webhook keeps its filter in its item, which the relay reads for each
alert of the brand: 1,000 ids are 26 KB, 10,000 would be 260 KB of a
400 KB item, read ten webhooks at a time."""


async def check_products(storage: Storage, brand_id: str, alert_filter: AlertFilter) -> None:
    products = sorted(alert_filter.product_ids or ())
    if not products:
        return
    items = await storage.batch_get(PRODUCT_BY_ID, [{"product_id": p} for p in products])
    for product_id, item in zip(products, items, strict=True):
        if item is None or item.get("brandId") != brand_id:
            raise BadUserInput(
                f"filter.productIds: {product_id} is not a product of brand {brand_id}",
                hint="Name only the brand's own products (Brand.products lists them).",
            )
