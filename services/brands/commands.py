"""registerBrand (operator only): the brand, its counters, its first key and,
for a FREE brand, its starting credits, in one transaction."""

from __future__ import annotations

from dataclasses import dataclass

from domain.datetimes import format_datetime
from domain.enums import Plan
from domain.hosts import validate_domain
from domain.identifiers import hash_api_key, new_api_key, new_id
from domain.validation import BRAND_NAME, INDUSTRY, parse_enum
from storage import Item, ItemAbsent, Put
from storage.access_patterns import BRAND_BY_ID, BRAND_STATS

from ..apikeys.items import api_key_item
from ..audit.items import audit_entry
from ..auth import Role
from ..context import CommandContext
from ..ledger import grant_actions
from ..transact import transact
from .items import brand_index_item, brand_profile_item, brand_stats_item

__all__ = ["FIRST_KEY_NAME", "RegisteredBrand", "register_brand"]

FIRST_KEY_NAME = "default"


@dataclass(frozen=True)
class RegisteredBrand:
    profile: Item
    api_key: str
    """The brand's first key (role BRAND); only its hash is stored."""


async def register_brand(
    context: CommandContext, name: str, domain: str, industry: str | None, plan: str | Plan
) -> RegisteredBrand:
    context.principal.require_admin()
    name = BRAND_NAME(name)
    domain = validate_domain(domain)
    industry = INDUSTRY.optional(industry)
    parsed_plan = parse_enum(Plan, plan, field="plan")
    now = context.now()
    created_at = format_datetime(now)
    brand_id = new_id(now)
    api_key = new_api_key()
    profile = brand_profile_item(
        brand_id=brand_id,
        name=name,
        domain=domain,
        industry=industry,
        plan=parsed_plan.value,
        created_at=created_at,
    )
    stats = brand_stats_item(brand_id)
    credits = context.services.free_plan_credits
    grant = grant_actions(brand_id, now, credits) if parsed_plan is Plan.FREE else []
    first_key = api_key_item(
        key_hash=hash_api_key(api_key),
        brand_id=brand_id,
        role=Role.BRAND.value,
        name=FIRST_KEY_NAME,
        created_at=created_at,
    )
    await transact(
        context.storage,
        [
            Put(profile, ItemAbsent()),
            Put(stats, ItemAbsent()),
            Put(brand_index_item(brand_id=brand_id, created_at=created_at)),
            Put(first_key, ItemAbsent()),
            audit_entry(
                context.principal, "registerBrand", now, brand_id=brand_id, target_ids=[brand_id]
            ),
            *grant,
        ],
    )
    context.loaders.prime(BRAND_BY_ID, profile, brand_id=brand_id)
    context.loaders.prime(BRAND_STATS, stats, brand_id=brand_id)
    return RegisteredBrand(profile, api_key)
