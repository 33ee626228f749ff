"""product, productByCode and explore."""

from __future__ import annotations

import strawberry

from domain.errors import NotFound, ProofgateError
from domain.identifiers import parse_verification_code
from domain.validation import validate_id
from services.products.reads import readable_product
from storage.access_patterns import PRODUCT_BY_CODE, PRODUCT_BY_ID, PRODUCT_GALLERY

from ..context import Info
from ..fields import ap_field
from ..types.connection import Connection, connection
from .types import Product

__all__ = ["ProductQueries"]


@strawberry.type
class ProductQueries:
    @ap_field(
        PRODUCT_BY_ID, description="A product of the caller's brand (any brand for the operator)"
    )
    async def product(self, info: Info, id: strawberry.ID) -> Product | None:
        info.context.principal.require_authenticated()
        return Product.from_item(await readable_product(info.context, validate_id(id)))

    @ap_field(
        PRODUCT_BY_CODE,
        loads=PRODUCT_BY_ID,
        description="The product printed with this verification code. Anyone may look one up; "
        "verificationCode and scanCount need the brand's own key. Records nothing.",
    )
    async def product_by_code(self, info: Info, code: str) -> Product | None:
        canonical = parse_verification_code(code)
        lookup = (
            await info.context.loaders.item(PRODUCT_BY_CODE, code=canonical) if canonical else None
        )
        if lookup is None:
            raise NotFound("No product has this verification code")
        item = await info.context.loaders.item(PRODUCT_BY_ID, product_id=lookup["productId"])
        if item is None:
            raise ProofgateError("A verification code names a product that does not exist")
        return Product.from_item(item)

    @ap_field(PRODUCT_GALLERY, loads=PRODUCT_BY_ID, description="The public gallery, newest first")
    async def explore(
        self, info: Info, first: int | None = None, after: str | None = None
    ) -> Connection[Product]:
        loaders = info.context.loaders
        page = await loaders.page(PRODUCT_GALLERY, {}, first=first, after=after)
        items = await loaders.items(
            PRODUCT_BY_ID, [{"product_id": entry["productId"]} for entry in page.items]
        )
        nodes = []
        for item in items:
            if item is None:
                raise ProofgateError("The gallery lists a product that does not exist")
            nodes.append(Product.from_item(item))
        return connection(page, Product.from_item, nodes)
