"""RegisterBrandInput and what registerBrand returns."""

from __future__ import annotations

import strawberry

from domain.enums import Plan

from .types import Brand

__all__ = ["RegisterBrandInput", "RegisterBrandPayload"]


@strawberry.input
class RegisterBrandInput:
    name: str
    domain: str
    industry: str | None = None
    plan: Plan = Plan.FREE


@strawberry.type
class RegisterBrandPayload:
    brand: Brand
    api_key: str = strawberry.field(
        description="The brand's first key (role BRAND). Shown once: only its hash is stored."
    )
