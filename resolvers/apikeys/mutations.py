"""createApiKey and revokeApiKey (``services.apikeys.commands``)."""

from __future__ import annotations

import strawberry

from services.apikeys import commands
from storage.access_patterns import API_KEY_BY_HASH

from ..context import Info
from ..fields import mutation_field
from ..types.enums import ApiKeyRole
from .types import ApiKey, CreateApiKeyPayload

__all__ = ["ApiKeyMutations"]


@strawberry.type
class ApiKeyMutations:
    @mutation_field(description="A new key for the brand: BRAND may write, PARTNER only reads")
    async def create_api_key(
        self, info: Info, brand_id: strawberry.ID, name: str, role: ApiKeyRole
    ) -> CreateApiKeyPayload:
        created = await commands.create_api_key(info.context, brand_id, name, role.value)
        return CreateApiKeyPayload(id=strawberry.ID(created.key_hash), api_key=created.api_key)

    @mutation_field(
        reads=API_KEY_BY_HASH,
        description=(
            "Revoke a key; it stops working at once on the process that revoked it and "
            "within PROOFGATE_KEY_CACHE_MS (100 ms) on the others. Revoking twice is harmless."
        ),
    )
    async def revoke_api_key(self, info: Info, id: strawberry.ID) -> ApiKey:
        return ApiKey.from_item(await commands.revoke_api_key(info.context, id))
