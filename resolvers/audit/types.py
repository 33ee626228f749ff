"""The audit entry as the operator reads it."""

from __future__ import annotations

import strawberry

from domain.datetimes import parse_datetime
from storage import Item

from ..types.scalars import DateTime

__all__ = ["AuditEntry"]


@strawberry.type(description="One mutation, recorded in the same transaction as its change")
class AuditEntry:
    id: strawberry.ID
    occurred_at: DateTime
    action: str
    actor_role: str
    actor_brand_id: strawberry.ID | None
    actor_key_id: strawberry.ID | None
    brand_id: strawberry.ID | None
    target_ids: list[strawberry.ID]

    @classmethod
    def from_item(cls, item: Item) -> AuditEntry:
        return cls(
            id=strawberry.ID(item["id"]),
            occurred_at=parse_datetime(item["occurredAt"]),
            action=item["action"],
            actor_role=item["actorRole"],
            actor_brand_id=item.get("actorBrandId"),
            actor_key_id=item.get("actorKeyId"),
            brand_id=item.get("brandId"),
            target_ids=[strawberry.ID(i) for i in item.get("targetIds", [])],
        )
