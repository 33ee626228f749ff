"""Product.claim, attached to the Product type (AP11)."""

from __future__ import annotations

from services.claims.items import claim_is_active
from services.visibility import require_owner
from storage.access_patterns import PRODUCT_CLAIM

from ..context import Info
from ..provenance.fields import ProductRoot
from .types import Claim

__all__ = ["product_claim"]


async def product_claim(root: ProductRoot, info: Info) -> Claim | None:
    """The active claim, for the brand's keys; null when unclaimed or expired."""
    require_owner(info.context.principal, root.brand_id, "claim")
    item = await info.context.loaders.item(PRODUCT_CLAIM, product_id=str(root.id))
    return (
        Claim.from_item(item)
        if item is not None and claim_is_active(item, info.context.now())
        else None
    )
