"""registerBrand (``services.brands.commands``)."""

from __future__ import annotations

import strawberry

from services.brands import commands

from ..context import Info
from ..fields import mutation_field
from .inputs import RegisterBrandInput, RegisterBrandPayload
from .types import Brand

__all__ = ["BrandMutations"]


@strawberry.type
class BrandMutations:
    @mutation_field(description="Create a brand and its first API key (operator only)")
    async def register_brand(self, info: Info, input: RegisterBrandInput) -> RegisterBrandPayload:
        registered = await commands.register_brand(
            info.context, input.name, input.domain, input.industry, input.plan
        )
        return RegisterBrandPayload(
            brand=Brand.from_item(registered.profile), api_key=registered.api_key
        )
