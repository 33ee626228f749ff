"""Reading a product on behalf of a caller."""

from __future__ import annotations

from domain.errors import NotFound
from storage import Item
from storage.access_patterns import PRODUCT_BY_ID

from ..context import CommandContext

__all__ = ["readable_product"]


async def readable_product(context: CommandContext, product_id: str) -> Item:
    """The product, if the caller's brand owns it (or the caller is the
    operator). Missing and foreign answer alike, so ids leak nothing."""
    item = await context.loaders.item(PRODUCT_BY_ID, product_id=product_id)
    if item is None or not context.principal.can_read(item["brandId"]):
        raise NotFound("Product not found")
    return item
