"""transferProduct and recallProduct (``services.lifecycle.commands``)."""

from __future__ import annotations

import strawberry

from services.lifecycle import commands
from storage.access_patterns import PRODUCT_BY_ID

from ..context import Info
from ..fields import mutation_field
from ..products.types import Product

__all__ = ["LifecycleMutations"]


@strawberry.type
class LifecycleMutations:
    @mutation_field(
        reads=PRODUCT_BY_ID,
        description="Transfer a product to a new owner: appends a TRANSFERRED event and sets "
        "status TRANSFERRED. A recalled product cannot be transferred.",
    )
    async def transfer_product(
        self, info: Info, product_id: strawberry.ID, to: str, reason: str | None = None
    ) -> Product:
        item = await commands.transfer_product(info.context, product_id, to, reason)
        return Product.from_item(item)

    @mutation_field(
        reads=PRODUCT_BY_ID,
        description="Recall a product: appends a RECALLED event, sets status RECALLED and raises "
        "a PRODUCT_RECALL threat. A recall is final; a second one is CONFLICT.",
    )
    async def recall_product(self, info: Info, product_id: strawberry.ID, reason: str) -> Product:
        item = await commands.recall_product(info.context, product_id, reason)
        return Product.from_item(item)
