"""Driver-level query requests, shared by the tests of each backend's driver."""

from __future__ import annotations

from storage.driver import QueryRequest
from storage.registry import SortRange
from storage.table import TABLE, IndexDefinition

__all__ = ["query_request"]


def query_request(
    partition: str,
    sort: SortRange,
    *,
    index: IndexDefinition = TABLE.primary,
    limit: int = 100,
    forward: bool = True,
    start: dict[str, str] | None = None,
) -> QueryRequest:
    """Consistent on the table only: DynamoDB refuses consistent reads of a GSI."""
    return QueryRequest(index, partition, sort, forward, limit, start, index == TABLE.primary)
