"""createApiKey and revokeApiKey.

Both are the brand's own business (a BRAND key or the operator). A key of
another brand gets NOT_FOUND, exactly as for a brand or key that does not exist.
"""

from __future__ import annotations

from dataclasses import dataclass

from domain.datetimes import format_datetime
from domain.encoding import is_sha256_hex
from domain.errors import ConditionFailed, NotFound
from domain.identifiers import hash_api_key, new_api_key
from domain.validation import API_KEY_NAME, validate_id
from storage import All, AttributeAbsent, ConditionCheck, Item, ItemAbsent, ItemExists, Put, Update
from storage.access_patterns import API_KEY_BY_HASH, BRAND_BY_ID

from ..audit.items import audit_entry
from ..context import CommandContext
from ..transact import transact
from .items import api_key_item

__all__ = ["NewApiKey", "create_api_key", "revoke_api_key"]


@dataclass(frozen=True)
class NewApiKey:
    key_hash: str
    """The key's id."""
    api_key: str
    """Shown once: only its hash is stored."""


async def _owned_key(context: CommandContext, key_hash: str) -> Item:
    if not is_sha256_hex(key_hash):
        raise NotFound("API key not found")
    context.loaders.forget(API_KEY_BY_HASH, key_hash=key_hash)
    item = await context.loaders.item(API_KEY_BY_HASH, key_hash=key_hash)
    if item is None or not context.principal.can_read(item["brandId"]):
        raise NotFound("API key not found")
    if item.get("integrationId"):
        # Its integration's record must stop counting it too (docs/design.md, Partner ingest).
        raise NotFound("API key not found", hint="Revoke an ingest key with revokeIntegration.")
    context.principal.require_write(item["brandId"], "API key")
    return item


async def create_api_key(context: CommandContext, brand_id: str, name: str, role: str) -> NewApiKey:
    brand = validate_id(brand_id, field="brandId")
    context.principal.require_write(brand)
    name = API_KEY_NAME(name)
    now = context.now()
    api_key = new_api_key()
    key_hash = hash_api_key(api_key)
    item = api_key_item(
        key_hash=key_hash, brand_id=brand, role=role, name=name, created_at=format_datetime(now)
    )
    try:
        await transact(
            context.storage,
            [
                ConditionCheck(BRAND_BY_ID.key(brand_id=brand), ItemExists()),
                Put(item, ItemAbsent()),
                audit_entry(
                    context.principal, "createApiKey", now, brand_id=brand, target_ids=[key_hash]
                ),
            ],
        )
    except ConditionFailed as error:
        if error.index == 0:
            raise NotFound("Brand not found") from None
        raise
    return NewApiKey(key_hash, api_key)


async def revoke_api_key(context: CommandContext, key_hash: str) -> Item:
    """The key as revoking left it; revoking twice is harmless."""
    context.principal.require_authenticated()
    key = await _owned_key(context, key_hash)
    if key.get("revokedAt"):
        return key
    now = context.now()
    revoked_at = format_datetime(now)
    try:
        await transact(
            context.storage,
            [
                Update(
                    API_KEY_BY_HASH.key(key_hash=key["id"]),
                    set={"revokedAt": revoked_at},
                    condition=All(ItemExists(), AttributeAbsent("revokedAt")),
                ),
                audit_entry(
                    context.principal,
                    "revokeApiKey",
                    now,
                    brand_id=key["brandId"],
                    target_ids=[key["id"]],
                ),
            ],
        )
    except ConditionFailed:
        return await _owned_key(context, key_hash)
    finally:
        context.services.keys.forget(key["id"])
    return {**key, "revokedAt": revoked_at}
