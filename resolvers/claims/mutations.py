"""claimProduct and disputeClaim (``services.claims.commands``)."""

from __future__ import annotations

import strawberry

from services.claims import commands
from storage.access_patterns import PRODUCT_BY_CODE

from ..context import Info
from ..fields import mutation_field
from .types import Claim

__all__ = ["ClaimMutations"]


@strawberry.type
class ClaimMutations:
    @mutation_field(
        reads=PRODUCT_BY_CODE,
        description="Claim ownership of a product (public). One active claim per product; "
        "it expires after the configured time. A claimed product is CONFLICT.",
    )
    async def claim_product(self, info: Info, code: str, device_fingerprint: str) -> Claim:
        item = await commands.claim_product(info.context, code, device_fingerprint)
        return Claim.from_item(item)

    @mutation_field(
        reads=PRODUCT_BY_CODE,
        description="Dispute the active claim of a product (public). Raises an "
        "OWNERSHIP_DISPUTE threat for the brand; with no active claim it is BAD_USER_INPUT.",
    )
    async def dispute_claim(
        self, info: Info, code: str, device_fingerprint: str, reason: str
    ) -> Claim:
        item = await commands.dispute_claim(info.context, code, device_fingerprint, reason)
        return Claim.from_item(item)
