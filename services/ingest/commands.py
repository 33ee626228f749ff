"""createIntegration and revokeIntegration: the brand's BRAND keys and the
operator (docs/design.md, Partner ingest).

A PARTNER key is FORBIDDEN, a key of another brand gets NOT_FOUND exactly as
for an integration that does not exist.
"""

from __future__ import annotations

from dataclasses import dataclass

from domain.datetimes import format_datetime
from domain.enums import IntegrationType
from domain.errors import ConditionFailed, NotFound
from domain.identifiers import hash_api_key, new_id
from domain.ingest import ingest_key
from domain.validation import INTEGRATION_NAME, validate_id
from storage import All, AttributeAbsent, ConditionCheck, Item, ItemExists, Update
from storage.access_patterns import API_KEY_BY_HASH, BRAND_BY_ID, INTEGRATION_BY_ID

from ..audit.items import audit_entry
from ..context import CommandContext
from ..transact import transact
from .items import IntegrationRef, ingest_key_item, integration_item, parse_integration_id

__all__ = ["NewIntegration", "create_integration", "revoke_integration"]


@dataclass(frozen=True)
class NewIntegration:
    item: Item
    ingest_key: str
    """Shown once: the table keeps only its hash."""


async def create_integration(
    context: CommandContext, brand_id: str, name: str, integration_type: IntegrationType
) -> NewIntegration:
    brand = validate_id(brand_id, field="brandId")
    context.principal.require_write(brand)
    name = INTEGRATION_NAME(name)
    now = context.now()
    ref = IntegrationRef(brand, new_id(now))
    key = ingest_key(context.services.hash_salt, ref.id)
    key_hash = hash_api_key(key)
    put = integration_item(
        ref, name=name, integration_type=integration_type, key_hash=key_hash, created_at=now
    )
    try:
        await transact(
            context.storage,
            [
                ConditionCheck(BRAND_BY_ID.key(brand_id=brand), ItemExists()),
                put,
                ingest_key_item(ref, key_hash=key_hash, name=name, created_at=now),
                audit_entry(
                    context.principal, "createIntegration", now, brand_id=brand, target_ids=[ref.id]
                ),
            ],
        )
    except ConditionFailed as error:
        if error.index == 0:
            raise NotFound("Brand not found") from None
        raise
    return NewIntegration(put.item, key)


async def _owned(context: CommandContext, ref: IntegrationRef) -> Item:
    context.principal.require_write(ref.brand_id, "Integration")
    context.loaders.forget(INTEGRATION_BY_ID, **ref.params)
    item = await context.loaders.item(INTEGRATION_BY_ID, **ref.params)
    if item is None:
        raise NotFound("Integration not found")
    return item


async def revoke_integration(context: CommandContext, integration_id: str) -> Item:
    """The integration as revoking left it; revoking twice is harmless. Its key
    and the integration are marked in one transaction, and every append of
    the integration is conditional on the mark's absence, so no event lands
    once this returns."""
    context.principal.require_authenticated()
    ref = parse_integration_id(integration_id)
    item = await _owned(context, ref)
    if item.get("revokedAt"):
        return item
    now = context.now()
    revoked_at = format_datetime(now)
    try:
        await transact(
            context.storage,
            [
                Update(
                    INTEGRATION_BY_ID.key(**ref.params),
                    set={"revokedAt": revoked_at},
                    condition=All(ItemExists(), AttributeAbsent("revokedAt")),
                ),
                Update(
                    API_KEY_BY_HASH.key(key_hash=item["keyHash"]),
                    set={"revokedAt": revoked_at},
                    condition=ItemExists(),
                ),
                audit_entry(
                    context.principal,
                    "revokeIntegration",
                    now,
                    brand_id=ref.brand_id,
                    target_ids=[ref.id],
                ),
            ],
        )
    except ConditionFailed as error:
        if error.index != 0:
            raise
        return await _owned(context, ref)
    finally:
        context.services.keys.forget(item["keyHash"])
    context.loaders.forget(INTEGRATION_BY_ID, **ref.params)
    return {**item, "revokedAt": revoked_at}
