"""Reading a product that the caller is about to change."""

from __future__ import annotations

from domain.validation import validate_id
from storage import Item

from ..context import CommandContext
from ..products.reads import readable_product

__all__ = ["writable_product"]


async def writable_product(
    context: CommandContext, product_id: str, *, field: str = "productId"
) -> Item:
    """Anonymous callers are UNAUTHENTICATED; a missing or foreign product is
    NOT_FOUND (alike, so ids leak nothing); a partner key is FORBIDDEN."""
    principal = context.principal
    principal.require_authenticated()
    item = await readable_product(context, validate_id(product_id, field=field))
    principal.require_write(item["brandId"], "Product")
    return item
