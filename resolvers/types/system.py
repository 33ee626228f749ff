"""Types about the gateway itself: health, the caller, the access patterns."""

from __future__ import annotations

import strawberry

from storage.registry import AccessPattern as AccessPatternDefinition
from storage.table import TABLE

__all__ = ["AccessPattern", "Health", "Viewer"]


@strawberry.type
class Health:
    status: str
    storage: str
    version: str


@strawberry.type
class Viewer:
    role: str
    brand_id: strawberry.ID | None


@strawberry.type
class AccessPattern:
    id: str
    name: str
    operation: str
    index: str
    partition_key: str
    sort_key: str

    @classmethod
    def from_definition(cls, ap: AccessPatternDefinition) -> AccessPattern:
        index = TABLE.index(ap.index)
        return cls(
            id=ap.id,
            name=ap.name,
            operation=ap.operation.value,
            index=ap.index.value,
            partition_key=f"{index.partition_key} = {ap.partition_key.source}",
            sort_key=f"{index.sort_key} {ap.sort_key.describe()}",
        )
