"""createApiKey and revokeApiKey.

Both are the brand's own business (a BRAND key or the operator). A key of
another brand gets NOT_FOUND, exactly as for a brand or key that does not exist.
"""

from __future__ import annotations

import strawberry

from domain.datetimes import format_datetime
from domain.encoding import is_sha256_hex
from domain.errors import ConditionFailed, NotFound
from domain.identifiers import hash_api_key, new_api_key
from domain.validation import API_KEY_NAME, validate_id
from services.apikeys.items import api_key_item
from services.audit.items import audit_entry
from services.transact import transact
from storage import (
    All,
    AttributeAbsent,
    ConditionCheck,
    ItemAbsent,
    ItemExists,
    Put,
    Update,
)
from storage.access_patterns import API_KEY_BY_HASH, BRAND_BY_ID

from ..context import Info, RequestContext
from ..fields import mutation_field
from ..types.enums import ApiKeyRole
from .types import ApiKey, CreateApiKeyPayload

__all__ = ["ApiKeyMutations"]


async def _owned_key(context: RequestContext, key_id: str) -> ApiKey:
    if not is_sha256_hex(key_id):
        raise NotFound("API key not found")
    context.loaders.forget(API_KEY_BY_HASH, key_hash=key_id)
    item = await context.loaders.item(API_KEY_BY_HASH, key_hash=key_id)
    if item is None or not context.principal.can_read(item["brandId"]):
        raise NotFound("API key not found")
    context.principal.require_write(item["brandId"], "API key")
    return ApiKey.from_item(item)


@strawberry.type
class ApiKeyMutations:
    @mutation_field(description="A new key for the brand: BRAND may write, PARTNER only reads")
    async def create_api_key(
        self, info: Info, brand_id: strawberry.ID, name: str, role: ApiKeyRole
    ) -> CreateApiKeyPayload:
        context = info.context
        brand = validate_id(brand_id, field="brandId")
        context.principal.require_write(brand)
        name = API_KEY_NAME(name)
        now = context.now()
        api_key = new_api_key()
        key_hash = hash_api_key(api_key)
        item = api_key_item(
            key_hash=key_hash,
            brand_id=brand,
            role=role.value,
            name=name,
            created_at=format_datetime(now),
        )
        try:
            await transact(
                context.storage,
                [
                    ConditionCheck(BRAND_BY_ID.key(brand_id=brand), ItemExists()),
                    Put(item, ItemAbsent()),
                    audit_entry(
                        context.principal,
                        "createApiKey",
                        now,
                        brand_id=brand,
                        target_ids=[key_hash],
                    ),
                ],
            )
        except ConditionFailed as error:
            if error.index == 0:
                raise NotFound("Brand not found") from None
            raise
        return CreateApiKeyPayload(id=strawberry.ID(key_hash), api_key=api_key)

    @mutation_field(
        reads=API_KEY_BY_HASH,
        description="Revoke a key; it stops working at once. Revoking twice is harmless.",
    )
    async def revoke_api_key(self, info: Info, id: strawberry.ID) -> ApiKey:
        context = info.context
        context.principal.require_authenticated()
        key = await _owned_key(context, id)
        if key.revoked_at is not None:
            return key
        now = context.now()
        try:
            await transact(
                context.storage,
                [
                    Update(
                        API_KEY_BY_HASH.key(key_hash=key.id),
                        set={"revokedAt": format_datetime(now)},
                        condition=All(ItemExists(), AttributeAbsent("revokedAt")),
                    ),
                    audit_entry(
                        context.principal,
                        "revokeApiKey",
                        now,
                        brand_id=key.brand_id,
                        target_ids=[key.id],
                    ),
                ],
            )
        except ConditionFailed:
            return await _owned_key(context, id)
        return ApiKey(
            id=key.id,
            name=key.name,
            role=key.role,
            brand_id=key.brand_id,
            created_at=key.created_at,
            revoked_at=now,
        )
