"""brand(id) and brands."""

from __future__ import annotations

import strawberry

from domain.errors import NotFound, ProofgateError
from domain.validation import validate_id
from storage.access_patterns import BRAND_BY_ID, BRANDS_NEWEST

from ..context import Info
from ..fields import ap_field
from ..types.connection import Connection, connection
from .types import Brand

__all__ = ["BrandQueries"]


@strawberry.type
class BrandQueries:
    @ap_field(BRAND_BY_ID, description="The caller's own brand (any brand for the operator)")
    async def brand(self, info: Info, id: strawberry.ID) -> Brand | None:
        brand_id = validate_id(id)
        info.context.principal.require_read(brand_id)
        item = await info.context.loaders.item(BRAND_BY_ID, brand_id=brand_id)
        if item is None:
            raise NotFound("Brand not found")
        return Brand.from_item(item)

    @ap_field(
        BRANDS_NEWEST, loads=BRAND_BY_ID, description="Every brand, newest first (operator only)"
    )
    async def brands(
        self, info: Info, first: int | None = None, after: str | None = None
    ) -> Connection[Brand]:
        info.context.principal.require_admin()
        loaders = info.context.loaders
        page = await loaders.page(BRANDS_NEWEST, {}, first=first, after=after)
        items = await loaders.items(
            BRAND_BY_ID, [{"brand_id": entry["brandId"]} for entry in page.items]
        )
        nodes = []
        for item in items:
            if item is None:
                raise ProofgateError("The brand index lists a brand that does not exist")
            nodes.append(Brand.from_item(item))
        return connection(page, Brand.from_item, nodes)
