"""What a backend implements: the raw operations, one call each.

Everything the backends must do alike (resolving access patterns, paging to an
exact ``hasNextPage``, cursors, batch chunking and retries, transaction checks,
tracing) lives once in ``storage.store``; a driver only talks to its
engine. Drivers raise ``ConditionFailed``, ``TransactionCanceled``,
``ServiceUnavailable`` and ``LimitExceeded`` from ``domain.errors``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Protocol

from .keys import Key
from .registry import SortRange
from .table import IndexDefinition
from .values import Item
from .writes import WriteAction

__all__ = ["BatchGetResult", "Driver", "QueryRequest", "QueryResult"]


class QueryRequest(NamedTuple):
    """A NamedTuple: a frozen dataclass sets each field through
    ``object.__setattr__``, and the store builds one per page it reads
    (docs/design.md, Verify path). ``table_index``, as a field named
    ``index`` would hide ``tuple.index``."""

    table_index: IndexDefinition
    partition: str
    sort: SortRange
    forward: bool
    limit: int
    start_key: dict[str, str] | None
    consistent: bool


class QueryResult(NamedTuple):
    items: list[Item]
    last_evaluated_key: dict[str, str] | None
    capacity: float


class BatchGetResult(NamedTuple):
    items: list[Item]
    unprocessed: list[Key]
    capacity: float


class Driver(Protocol):
    name: str

    async def get_item(self, key: Key, consistent: bool) -> tuple[Item | None, float]:
        """One GetItem; returns the item (or None) and the read units consumed."""

    async def batch_get_items(self, keys: Sequence[Key], consistent: bool) -> BatchGetResult:
        """One BatchGetItem of at most 100 distinct keys."""

    async def query(self, request: QueryRequest) -> QueryResult:
        """One Query call: at most ``limit`` items and at most 1 MB read."""

    async def write(self, action: WriteAction) -> float:
        """One non-transactional PutItem / UpdateItem / DeleteItem."""

    async def transact_write(self, actions: Sequence[WriteAction]) -> float:
        """One TransactWriteItems: all or nothing."""

    async def close(self) -> None: ...
