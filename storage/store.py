"""The one implementation of ``Storage``, over any ``Driver``.

Everything both backends must do identically lives here, so the conformance
suite tests one behaviour rather than two copies of it.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping, Sequence
from typing import Any

from domain.errors import (
    AccessPatternError,
    ConditionFailed,
    InvalidCursor,
    LimitExceeded,
    ServiceUnavailable,
)

from .budget import before_read, spend_read
from .cursor import CursorCodec
from .driver import Driver, QueryRequest
from .keys import Key
from .limits import (
    BACKOFF_BASE_SECONDS,
    BACKOFF_CAP_SECONDS,
    BATCH_GET_MAX_ATTEMPTS,
    BATCH_GET_MAX_KEYS,
    TRANSACT_MAX_BYTES,
    TRANSACT_MAX_ITEMS,
)
from .protocol import Page
from .registry import AccessPattern, Direction, Operation, Registry, SortRange
from .table import TABLE
from .trace import record
from .values import Item
from .writes import ConditionCheck, Put, Update, WriteAction

__all__ = ["Store", "backoff_delay"]

_PK, _SK = TABLE.primary.partition_key, TABLE.primary.sort_key


def backoff_delay(attempt: int) -> float:
    """Full-jitter exponential backoff, capped."""
    return random.uniform(0, min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * 2**attempt))


def _read(operation: str, ap: AccessPattern, items: int, capacity: float) -> None:
    """Traced first, so a trace shows the read that went over the budget."""
    record(operation, ap.id, items, capacity)
    spend_read(items, capacity)


def _item_key(item: Item) -> Key:
    return Key(item[_PK], item[_SK])


class Store:
    def __init__(self, driver: Driver, cursors: CursorCodec, registry: Registry) -> None:
        self._driver = driver
        self._cursors = cursors
        self._registry = registry
        self.backend = driver.name

    async def get(self, ap: AccessPattern, /, **params: Any) -> Item | None:
        self._registry.require(ap, Operation.GET)
        key = ap.key(**params)
        before_read()
        item, capacity = await self._driver.get_item(key, ap.consistent)
        _read("GetItem", ap, int(item is not None), capacity)
        return item

    async def get_at(self, ap: AccessPattern, key: Key) -> Item | None:
        """``get`` for a key its caller built with ``ap.key`` after
        ``require`` (the storage cache's miss: a key spelled once)."""
        before_read()
        item, capacity = await self._driver.get_item(key, ap.consistent)
        _read("GetItem", ap, int(item is not None), capacity)
        return item

    async def batch_get(
        self, ap: AccessPattern, params: Sequence[Mapping[str, Any]]
    ) -> list[Item | None]:
        self._registry.require(ap, Operation.BATCH_GET)
        return await self.batch_get_at(ap, [ap.key(**p) for p in params])

    async def batch_get_at(self, ap: AccessPattern, keys: Sequence[Key]) -> list[Item | None]:
        """``batch_get`` for keys built as ``get_at``'s are."""
        unique = list(dict.fromkeys(keys))
        chunks = [
            unique[i : i + BATCH_GET_MAX_KEYS] for i in range(0, len(unique), BATCH_GET_MAX_KEYS)
        ]
        found: dict[Key, Item] = {}
        if len(chunks) == 1:  # most batches: awaited in place, without a task
            results = [await self._batch_chunk(ap, chunks[0])]
        else:
            results = await asyncio.gather(*(self._batch_chunk(ap, c) for c in chunks))
        for items in results:
            found.update((_item_key(item), item) for item in items)
        return [found.get(key) for key in keys]

    async def _batch_chunk(self, ap: AccessPattern, keys: list[Key]) -> list[Item]:
        items: list[Item] = []
        pending = keys
        for attempt in range(BATCH_GET_MAX_ATTEMPTS):
            if attempt:
                await asyncio.sleep(backoff_delay(attempt))
            before_read()
            result = await self._driver.batch_get_items(pending, ap.consistent)
            _read("BatchGetItem", ap, len(result.items), result.capacity)
            items.extend(result.items)
            pending = result.unprocessed
            if not pending:
                return items
        raise ServiceUnavailable(
            f"{len(pending)} keys stayed unprocessed after {BATCH_GET_MAX_ATTEMPTS} attempts",
            hint="The store is throttling; retry the request later.",
        )

    async def query(
        self,
        ap: AccessPattern,
        params: Mapping[str, Any],
        *,
        tenant: str,
        first: int | None = None,
        after: str | None = None,
    ) -> Page:
        self._registry.require(ap, Operation.QUERY)
        first = ap.default_page if first is None else first
        if isinstance(first, bool) or not isinstance(first, int) or not 0 <= first <= ap.max_page:
            raise LimitExceeded(f"first must be between 0 and {ap.max_page}")
        partition = ap.partition(params)
        sort = ap.sort_range(params)
        index = TABLE.index(ap.index)
        start = self._cursors.decode(after, ap.id, partition, tenant) if after is not None else None
        if start is not None and not _in_range(
            start, index.partition_key, index.sort_key, partition, sort
        ):
            raise InvalidCursor("Cursor belongs to another list")
        collected: list[Item] = []
        wanted = first + 1  # one extra item makes hasNextPage exact
        while len(collected) < wanted:
            before_read()
            result = await self._driver.query(
                QueryRequest(
                    table_index=index,
                    partition=partition,
                    sort=sort,
                    forward=ap.direction is Direction.FORWARD,
                    limit=wanted - len(collected),
                    start_key=start,
                    consistent=ap.consistent,
                )
            )
            _read("Query", ap, len(result.items), result.capacity)
            collected.extend(result.items)
            if result.last_evaluated_key is None:
                break
            start = result.last_evaluated_key
        key_attributes = (
            (_PK, _SK)
            if index is TABLE.primary
            else (_PK, _SK, index.partition_key, index.sort_key)
        )

        def mint(item: Item) -> str:
            return self._cursors.encode(
                ap.id, partition, {a: item[a] for a in key_attributes}, tenant
            )

        if len(collected) > first:
            return Page(collected[:first], True, mint, collected[first])
        return Page(collected, False, mint)

    async def transact_write(self, actions: Sequence[WriteAction]) -> None:
        actions = list(actions)
        if not actions:
            raise AccessPatternError("A transaction needs at least one action")
        if len(actions) > TRANSACT_MAX_ITEMS:
            raise LimitExceeded(
                f"A transaction takes at most {TRANSACT_MAX_ITEMS} actions, got {len(actions)}"
            )
        keys = [action.key for action in actions]
        if len(set(keys)) != len(keys):
            raise LimitExceeded("A transaction cannot include two actions on one item")
        size = sum(a.size if isinstance(a, Put | Update) else 0 for a in actions)
        if size > TRANSACT_MAX_BYTES:
            raise LimitExceeded(f"A transaction may write at most {TRANSACT_MAX_BYTES} bytes")
        if len(actions) == 1 and not isinstance(actions[0], ConditionCheck):
            # One item is atomic on its own; a plain write costs half the units.
            # A lone ConditionCheck has no plain counterpart, so it stays a transaction.
            capacity = await self._driver.write(actions[0])
            record(type(actions[0]).__name__ + "Item", None, 1, capacity)
            return
        try:
            capacity = await self._driver.transact_write(actions)
        except ConditionFailed as failed:
            if not await self._applied(actions, failed):
                raise
            capacity = 0.0
        record("TransactWriteItems", None, len(actions), capacity)

    async def _applied(self, actions: Sequence[WriteAction], failed: ConditionFailed) -> bool:
        """Whether the transaction is in the table already, which the driver's
        retry after a 5xx finds as a failed condition when the store did not
        honour its ``ClientRequestToken`` (moto): provable when the failing
        action is a Put and every Put's item is stored exactly as written,
        since a transaction applies whole or not at all."""
        failing = actions[failed.index] if 0 <= failed.index < len(actions) else None
        if not isinstance(failing, Put):
            return False
        puts = [failing, *(a for a in actions if isinstance(a, Put) and a is not failing)]
        for put in puts:
            stored, capacity = await self._driver.get_item(put.key, True)
            record("GetItem", None, int(stored is not None), capacity)
            if stored != put.item:
                return False
        return True

    async def close(self) -> None:
        await self._driver.close()


def _in_range(
    start: dict[str, str], pk_attribute: str, sk_attribute: str, partition: str, sort: SortRange
) -> bool:
    """A cursor from another time range of the same partition must not widen this one."""
    sort_key = start.get(sk_attribute)
    return (
        start.get(pk_attribute) == partition
        and isinstance(sort_key, str)
        and sort.matches(sort_key)
    )
