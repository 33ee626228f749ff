"""registerProduct and registerProducts."""

from __future__ import annotations

import strawberry

from domain.validation import validate_batch
from services.products.drafts import ProductDraft
from services.products.register import register_products
from storage.access_patterns import IDEMPOTENCY_RECORD

from ..context import Info
from ..fields import mutation_field
from .inputs import RegisterProductInput
from .types import Product

__all__ = ["ProductMutations"]


@strawberry.type
class ProductMutations:
    @mutation_field(reads=IDEMPOTENCY_RECORD, description="Register and certify one product")
    async def register_product(
        self, info: Info, input: RegisterProductInput, idempotency_key: str | None = None
    ) -> Product:
        info.context.principal.require_authenticated()
        draft = ProductDraft.validate(input, field="input")
        items = await register_products(
            info.context,
            [draft],
            ["input"],
            operation="registerProduct",
            idempotency_key=idempotency_key,
        )
        return Product.from_item(items[0])

    @mutation_field(
        reads=IDEMPOTENCY_RECORD,
        description="Register up to 100 products of one brand. "
        "Every input is validated before anything is written.",
    )
    async def register_products(
        self, info: Info, inputs: list[RegisterProductInput], idempotency_key: str | None = None
    ) -> list[Product]:
        info.context.principal.require_authenticated()
        validate_batch(inputs, field="inputs")
        fields = [f"inputs[{index}]" for index in range(len(inputs))]
        drafts = [
            ProductDraft.validate(data, field=field)
            for data, field in zip(inputs, fields, strict=True)
        ]
        items = await register_products(
            info.context,
            drafts,
            fields,
            operation="registerProducts",
            idempotency_key=idempotency_key,
        )
        return [Product.from_item(item) for item in items]
