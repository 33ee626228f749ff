"""registerBrand (operator only)."""

from __future__ import annotations

import strawberry

from domain.datetimes import format_datetime
from domain.enums import Plan
from domain.hosts import validate_domain
from domain.identifiers import hash_api_key, new_api_key, new_id
from domain.validation import BRAND_NAME, INDUSTRY, parse_enum
from services.apikeys.items import api_key_item
from services.audit.items import audit_entry
from services.auth import Role
from services.brands.items import brand_index_item, brand_profile_item, brand_stats_item
from services.ledger import grant_actions
from services.transact import transact
from storage import ItemAbsent, Put
from storage.access_patterns import BRAND_BY_ID, BRAND_STATS

from ..context import Info
from ..fields import mutation_field
from .inputs import RegisterBrandInput, RegisterBrandPayload
from .types import Brand

__all__ = ["BrandMutations"]

FIRST_KEY_NAME = "default"


@strawberry.type
class BrandMutations:
    @mutation_field(description="Create a brand and its first API key (operator only)")
    async def register_brand(self, info: Info, input: RegisterBrandInput) -> RegisterBrandPayload:
        context = info.context
        context.principal.require_admin()
        name = BRAND_NAME(input.name)
        domain = validate_domain(input.domain)
        industry = INDUSTRY.optional(input.industry)
        plan = parse_enum(Plan, input.plan, field="plan")
        now = context.now()
        created_at = format_datetime(now)
        brand_id = new_id(now)
        api_key = new_api_key()
        key_hash = hash_api_key(api_key)
        profile = brand_profile_item(
            brand_id=brand_id,
            name=name,
            domain=domain,
            industry=industry,
            plan=plan.value,
            created_at=created_at,
        )
        stats = brand_stats_item(brand_id)
        credits = context.services.free_plan_credits
        grant = grant_actions(brand_id, now, credits) if plan is Plan.FREE else []
        await transact(
            context.storage,
            [
                Put(profile, ItemAbsent()),
                Put(stats, ItemAbsent()),
                Put(brand_index_item(brand_id=brand_id, created_at=created_at)),
                Put(
                    api_key_item(
                        key_hash=key_hash,
                        brand_id=brand_id,
                        role=Role.BRAND.value,
                        name=FIRST_KEY_NAME,
                        created_at=created_at,
                    ),
                    ItemAbsent(),
                ),
                audit_entry(
                    context.principal,
                    "registerBrand",
                    now,
                    brand_id=brand_id,
                    target_ids=[brand_id],
                ),
                *grant,
            ],
        )
        context.loaders.prime(BRAND_BY_ID, profile, brand_id=brand_id)
        context.loaders.prime(BRAND_STATS, stats, brand_id=brand_id)
        return RegisterBrandPayload(brand=Brand.from_item(profile), api_key=api_key)
