"""The root types, assembled from one class per area."""

from __future__ import annotations

import strawberry

from .system import SystemQueries

__all__ = ["Mutation", "Query"]


@strawberry.type
class Query(SystemQueries):
    pass


@strawberry.type
class Mutation:
    @strawberry.field
    def noop(self) -> bool:
        return True
