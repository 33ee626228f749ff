"""API keys as their owners see them: never the key itself after creation."""

from __future__ import annotations

import strawberry

from domain.datetimes import parse_datetime
from storage import Item

from ..node.types import Node
from ..types.enums import ApiKeyRole
from ..types.scalars import DateTime

__all__ = ["ApiKey", "CreateApiKeyPayload"]


@strawberry.type
class CreateApiKeyPayload:
    id: strawberry.ID = strawberry.field(description="The key's id (its SHA-256), for revokeApiKey")
    api_key: str = strawberry.field(description="The key. Shown once: only its hash is stored.")


@strawberry.type
class ApiKey(Node):
    id: strawberry.ID
    name: str
    role: ApiKeyRole
    brand_id: strawberry.ID
    created_at: DateTime
    revoked_at: DateTime | None

    @classmethod
    def from_item(cls, item: Item) -> ApiKey:
        revoked = item.get("revokedAt")
        return cls(
            id=strawberry.ID(item["id"]),
            name=item["name"],
            role=ApiKeyRole(item["role"]),
            brand_id=strawberry.ID(item["brandId"]),
            created_at=parse_datetime(item["createdAt"]),
            revoked_at=parse_datetime(revoked) if revoked else None,
        )
