"""An item written to its row: a new row inserted, an existing one updated.

A verification's transaction updates rows that exist (the product's, the
brand's and the day counters) and changes no indexed column of any of them.
``INSERT OR REPLACE`` would delete each such row with its index entries and
insert it again, freeing and reallocating its overflow pages: about six WAL
pages for the product's counter alone. An ``UPDATE`` of the changed columns
rewrites the row in place and leaves alone the indexes whose columns it does
not name (docs/design.md, Storage). The stored row is the same either way; a
differential test holds the two paths to the same rows and index reads.
"""

from __future__ import annotations

import sqlite3
from operator import is_

from domain.errors import LimitExceeded

from ..limits import ITEM_MAX_BYTES
from ..table import TABLE
from ..values import Item
from ._codec import encode_item
from ._schema import (
    INDEXED_ATTRIBUTES,
    INDEXED_COLUMNS,
    expiry,
    insert_statement,
    row_keys,
    update_statement,
)

__all__ = ["store"]

_PK, _SK = TABLE.primary.partition_key, TABLE.primary.sort_key
_NOTHING_INDEXED = update_statement(())
_POSITIONS = range(len(INDEXED_COLUMNS))


def _indexed(item: Item) -> tuple[list[str | None], list[str | int | None]]:
    """The row's key columns (refusing GSI keys DynamoDB would refuse), and
    its indexed columns (``INDEXED_COLUMNS``)."""
    keys = row_keys(item)
    return list(keys[:2]), [*keys[2:], expiry(item)]


def _unchanged(item: Item, current: Item) -> bool:
    """No indexed attribute changed: each is the very object the stored item
    holds (an Update copies the ones it does not touch), which row_keys
    accepted when the row was written. A value set again is a new object
    and takes the column comparison instead."""
    return all(map(is_, map(item.get, INDEXED_ATTRIBUTES), map(current.get, INDEXED_ATTRIBUTES)))


def store(
    connection: sqlite3.Connection, item: Item, size: int, old_size: int, current: Item | None
) -> int:
    """Writes ``item`` (``size``: its ``item_size``) over the row that holds
    ``old_size`` bytes (0: there is none) and, when the caller read it,
    ``current``, the row's item. Without ``current`` an existing row has
    every indexed column written. Returns ``size``."""
    if size > ITEM_MAX_BYTES:
        raise LimitExceeded(f"Item size {size} bytes exceeds {ITEM_MAX_BYTES} bytes")
    if old_size and current is not None and _unchanged(item, current):
        connection.execute(_NOTHING_INDEXED, (size, encode_item(item), item[_PK], item[_SK]))
        return size
    key, indexed = _indexed(item)
    if not old_size:
        positions = [i for i in _POSITIONS if indexed[i] is not None]
        statement = insert_statement(tuple(INDEXED_COLUMNS[i] for i in positions))
        values = [indexed[i] for i in positions]
        connection.execute(statement, (*key, *values, size, encode_item(item)))
        return size
    old = indexed if current is None else _indexed(current)[1]
    positions = [i for i in _POSITIONS if current is None or indexed[i] != old[i]]
    values = [indexed[i] for i in positions]
    statement = update_statement(tuple(INDEXED_COLUMNS[i] for i in positions))
    connection.execute(statement, (*values, size, encode_item(item), *key))
    return size
