"""GetItem and BatchGetItem: primary-key reads, billed per item."""

from __future__ import annotations

import sqlite3

from domain.errors import LimitExceeded

from ..driver import BatchGetResult
from ..keys import Key
from ..limits import BATCH_GET_MAX_BYTES, BATCH_GET_MAX_KEYS
from ..table import TABLE
from ..values import Item
from ._capacity import read_units
from ._codec import decode_item
from ._schema import SELECT_ITEM, index_columns

__all__ = ["BATCH_STATEMENTS", "batch_get_items", "get_item"]

_PK, _SK = TABLE.primary.partition_key, TABLE.primary.sort_key
_PK_COLUMN, _SK_COLUMN = index_columns(TABLE.primary)

# A few statement shapes, padded with a key no item can have (keys are never
# empty), keep the statement cache small; CROSS JOIN makes the keys the outer
# loop, so each one is a primary-key lookup.
_BATCH_SIZES = (1, 2, 4, 8, 16, 32, 64, BATCH_GET_MAX_KEYS)
_PADDING = ("", "")
_JOIN = f"items.{_PK_COLUMN} = wanted.column1 AND items.{_SK_COLUMN} = wanted.column2"
BATCH_STATEMENTS = {
    size: f"SELECT data, size FROM (VALUES {', '.join(['(?, ?)'] * size)}) AS wanted "
    f"CROSS JOIN items ON {_JOIN}"
    for size in _BATCH_SIZES
}


def get_item(
    connection: sqlite3.Connection, key: Key, consistent: bool
) -> tuple[Item | None, float]:
    rows = connection.execute(SELECT_ITEM, key).fetchall()
    if not rows:
        return None, read_units(0, consistent)
    data, size = rows[0]
    return decode_item(data), read_units(size, consistent)


def batch_get_items(
    connection: sqlite3.Connection, keys: list[Key], consistent: bool
) -> BatchGetResult:
    """Stops before 16 MB, as DynamoDB does, returning the rest as unprocessed."""
    if len(keys) > BATCH_GET_MAX_KEYS:
        raise LimitExceeded(f"A BatchGetItem takes at most {BATCH_GET_MAX_KEYS} keys")
    if len(set(keys)) != len(keys):
        raise LimitExceeded("A BatchGetItem cannot name one key twice")
    if not keys:
        return BatchGetResult([], [], 0.0)
    size = next(s for s in _BATCH_SIZES if s >= len(keys))
    params = [part for key in keys for part in key]
    params.extend(_PADDING * (size - len(keys)))
    items: list[Item] = []
    capacity = 0.0
    total = 0
    for data, item_size in connection.execute(BATCH_STATEMENTS[size], params).fetchall():
        if items and total + item_size > BATCH_GET_MAX_BYTES:
            returned = {Key(item[_PK], item[_SK]) for item in items}
            return BatchGetResult(items, [k for k in keys if k not in returned], capacity)
        total += item_size
        items.append(decode_item(data))
        capacity += read_units(item_size, consistent)
    # A key with no item still costs what a GetItem of it would.
    capacity += (len(keys) - len(items)) * read_units(0, consistent)
    return BatchGetResult(items, [], capacity)
