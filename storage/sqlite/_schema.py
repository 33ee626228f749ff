"""The SQLite schema, built from the table definition, and its connections.

One ``items`` table clustered on (pk, sk), as DynamoDB clusters an item
collection, plus one partial index per GSI: an item without the GSI's keys is
not in the index, exactly as a sparse GSI. Each index ends with the table key,
which orders ties on the GSI sort key and makes a GSI position resumable. The
TTL attribute has a column and a partial index of its own, so the expiry sweep
finds expired items without reading the table.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from decimal import Decimal
from itertools import combinations
from typing import Any

from domain.errors import ConfigurationError, LimitExceeded

from ..limits import PARTITION_KEY_MAX_BYTES, SORT_KEY_MAX_BYTES
from ..table import TABLE, IndexDefinition
from ..values import Item
from ._checkpoint import FALLBACK_PAGES, FULL_WAIT_SECONDS

__all__ = [
    "DEFAULT_CACHE_MIB",
    "DELETE",
    "DELETE_EXPIRED",
    "INDEXED_ATTRIBUTES",
    "INDEXED_COLUMNS",
    "MEMORY",
    "SCHEMA_VERSION",
    "SELECT_ITEM",
    "SELECT_SIZE",
    "UPSERT",
    "column",
    "connect_checkpointer",
    "connect_loop",
    "connect_writer",
    "expiry",
    "index_columns",
    "index_name",
    "insert_statement",
    "row_keys",
    "update_statement",
]

# 1: items and GSIs; 2: the TTL column and its index (migrated in place).
SCHEMA_VERSION = 2
MEMORY = ":memory:"


def column(attribute: str) -> str:
    return attribute.lower()


def index_name(index: IndexDefinition) -> str:
    return f"items_{index.name.value.lower()}"


def index_columns(index: IndexDefinition) -> tuple[str, str]:
    return column(index.partition_key), column(index.sort_key)


_PK, _SK = index_columns(TABLE.primary)
_GSI_COLUMNS = [c for index in TABLE.global_secondary for c in index_columns(index)]
_TTL = column(TABLE.ttl_attribute)
# Past any real epoch second and inside SQLite's 64-bit INTEGER.
_TTL_MAX = 2**53
_COLUMNS = [_PK, _SK, *_GSI_COLUMNS, _TTL, "size", "data"]

_TTL_INDEX = f"CREATE INDEX items_ttl ON items ({_TTL}) WHERE {_TTL} IS NOT NULL"
_DDL = [
    "CREATE TABLE items ("
    f"{_PK} TEXT NOT NULL, {_SK} TEXT NOT NULL, "
    + "".join(f"{c} TEXT, " for c in _GSI_COLUMNS)
    + f"{_TTL} INTEGER, "
    + f"size INTEGER NOT NULL, data TEXT NOT NULL, PRIMARY KEY ({_PK}, {_SK})) WITHOUT ROWID",
    *(
        f"CREATE INDEX {index_name(index)} "
        f"ON items ({', '.join(index_columns(index))}, {_PK}, {_SK}) "
        f"WHERE {index_columns(index)[0]} IS NOT NULL"
        for index in TABLE.global_secondary
    ),
    _TTL_INDEX,
]
# Version 1 files get the column, filled from the stored items, and the index.
_MIGRATE_FROM_1 = [
    f"ALTER TABLE items ADD COLUMN {_TTL} INTEGER",
    f"UPDATE items SET {_TTL} = CAST(json_extract(data, '$.{TABLE.ttl_attribute}') AS INTEGER) "
    f"WHERE json_type(data, '$.{TABLE.ttl_attribute}') IN ('integer', 'real') "
    f"AND json_extract(data, '$.{TABLE.ttl_attribute}') BETWEEN 0 AND {_TTL_MAX - 1}",
    _TTL_INDEX,
]

SELECT_ITEM = f"SELECT data, size FROM items WHERE {_PK} = ? AND {_SK} = ?"
SELECT_SIZE = f"SELECT NULL, size FROM items WHERE {_PK} = ? AND {_SK} = ?"
UPSERT = (
    f"INSERT OR REPLACE INTO items ({', '.join(_COLUMNS)}) "
    f"VALUES ({', '.join('?' * len(_COLUMNS))})"
)
"""Every column bound: for loading many rows (``bench/scale.py``)."""
INDEXED_COLUMNS = (*_GSI_COLUMNS, _TTL)
"""The columns some index holds, in ``row_keys`` order then the TTL's."""
INDEXED_ATTRIBUTES = (
    *(a for index in TABLE.global_secondary for a in (index.partition_key, index.sort_key)),
    TABLE.ttl_attribute,
)
"""The item attributes ``INDEXED_COLUMNS`` are made from, in their order."""


def _insert(present: tuple[str, ...]) -> str:
    """Inserts a row with the indexed columns in ``present``; the others are
    NULL by default. Most rows have no GSI keys and no TTL, and the sqlite3
    module binds each None through its adapter protocol, an attribute lookup
    that fails, thousands of instructions a parameter (callgrind). One
    statement per subset of ``INDEXED_COLUMNS``, 32 in all."""
    columns = [_PK, _SK, *present, "size", "data"]
    return (
        f"INSERT OR REPLACE INTO items ({', '.join(columns)}) "
        f"VALUES ({', '.join('?' * len(columns))})"
    )


def _update(changed: tuple[str, ...]) -> str:
    """Rewrites an existing row's item and size, and of the indexed columns
    only those in ``changed``: SQLite updates an index only when the SET
    list names one of its columns, where INSERT OR REPLACE deletes the row
    and every index entry it has and inserts them again (docs/design.md,
    Storage). One statement per subset of ``INDEXED_COLUMNS``, 32 in all."""
    assignments = "".join(f"{name} = ?, " for name in changed)
    return f"UPDATE items SET {assignments}size = ?, data = ? WHERE {_PK} = ? AND {_SK} = ?"


# Every subset, each in INDEXED_COLUMNS order: 32 statements of each kind,
# well inside the connection's statement cache (512).
_SUBSETS = [c for n in range(len(INDEXED_COLUMNS) + 1) for c in combinations(INDEXED_COLUMNS, n)]
_INSERTS = {subset: _insert(subset) for subset in _SUBSETS}
_UPDATES = {subset: _update(subset) for subset in _SUBSETS}


def insert_statement(present: tuple[str, ...]) -> str:
    """``_insert`` of ``present``, a tuple of ``INDEXED_COLUMNS`` in their order."""
    return _INSERTS[present]


def update_statement(changed: tuple[str, ...]) -> str:
    """``_update`` of ``changed``, a tuple of ``INDEXED_COLUMNS`` in their order."""
    return _UPDATES[changed]


DELETE = f"DELETE FROM items WHERE {_PK} = ? AND {_SK} = ?"
# Through the TTL index, oldest expiry first, expired in [?, ?), at most ? rows.
DELETE_EXPIRED = (
    f"DELETE FROM items WHERE ({_PK}, {_SK}) IN ("
    f"SELECT {_PK}, {_SK} FROM items WHERE {_TTL} >= ? AND {_TTL} < ? "
    f"ORDER BY {_TTL} LIMIT ?)"
)


def expiry(item: Item) -> int | None:
    """DynamoDB's TTL only honours a Number of epoch seconds; any other type
    (or no attribute) means the item never expires."""
    value = item.get(TABLE.ttl_attribute)
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        return None
    if isinstance(value, Decimal) and not value.is_finite():
        return None
    seconds = int(value)
    return seconds if 0 <= seconds < _TTL_MAX else None


_PK_ATTRIBUTE, _SK_ATTRIBUTE = TABLE.primary.partition_key, TABLE.primary.sort_key
_GSIS = TABLE.global_secondary
# UTF-8 spends at most 4 bytes on a character: shorter keys need no encoding.
_PK_SAFE_CHARS = PARTITION_KEY_MAX_BYTES // 4
_SK_SAFE_CHARS = SORT_KEY_MAX_BYTES // 4


def _gsi_keys(item: Item, index: IndexDefinition) -> tuple[str | None, str | None]:
    partition, sort = item.get(index.partition_key), item.get(index.sort_key)
    # Nearly every item has neither key of an index, or both as short text:
    # answered at once; the loop below decides the rest, and a differential
    # test holds the shortcut to it (docs/design.md, Verify path).
    if partition is None and sort is None:
        if index.partition_key not in item and index.sort_key not in item:
            return None, None
    elif (
        type(partition) is str
        and type(sort) is str
        and 0 < len(partition) <= _PK_SAFE_CHARS
        and 0 < len(sort) <= _SK_SAFE_CHARS
    ):
        return partition, sort
    return _checked_gsi_keys(item, index, partition, sort)


def _checked_gsi_keys(
    item: Item, index: IndexDefinition, partition: Any, sort: Any
) -> tuple[str | None, str | None]:
    for attribute, value, limit in (
        (index.partition_key, partition, PARTITION_KEY_MAX_BYTES),
        (index.sort_key, sort, SORT_KEY_MAX_BYTES),
    ):
        if value is None and attribute not in item:
            continue
        if not isinstance(value, str) or not value:
            raise LimitExceeded(f"Key attribute {attribute} must be a non-empty string")
        if len(value.encode("utf-8")) > limit:
            raise LimitExceeded(f"Key attribute {attribute} is longer than {limit} bytes")
    if partition is None or sort is None:
        return None, None
    return partition, sort


def row_keys(item: Item) -> Sequence[str | None]:
    """The key columns of an item's row; refuses GSI keys DynamoDB would refuse."""
    keys: list[str | None] = [item[_PK_ATTRIBUTE], item[_SK_ATTRIBUTE]]
    for index in _GSIS:
        keys.extend(_gsi_keys(item, index))
    return keys


DEFAULT_CACHE_MIB = 4
"""Page cache of the loop's and the writer thread's connections. A miss costs
a read from the OS's file cache, microseconds; the cache only fills, so its
size is what the store adds to resident memory as the table grows
(docs/design.md, Storage)."""


def _connect(path: str, timeout: float, cache_mib: int) -> sqlite3.Connection:
    # Autocommit: every read is its own snapshot, writes say BEGIN IMMEDIATE.
    connection = sqlite3.connect(path, timeout=timeout, isolation_level=None, cached_statements=512)
    connection.execute(f"PRAGMA cache_size = -{cache_mib * 1024}")
    return connection


@contextmanager
def _opening(path: str) -> Iterator[None]:
    try:
        yield
    except sqlite3.Error as error:
        if os.path.isdir(path):
            raise ConfigurationError(
                f"Cannot open the SQLite store {path}: it is a directory",
                hint="Point PROOFGATE_SQLITE_PATH at a file, or unset it.",
            ) from None
        raise ConfigurationError(
            f"Cannot open the SQLite store {path}: {error}",
            hint="Check that the data directory exists and is writable.",
        ) from error


def connect_writer(
    path: str, timeout: float, ready: threading.Event, cache_mib: int = DEFAULT_CACHE_MIB
) -> sqlite3.Connection:
    """Opens the writing connection and brings the schema up to date; ``ready``
    is set when readers may open (even on failure, so they report it)."""
    try:
        with _opening(path):
            connection = _connect(path, timeout, cache_mib)
            try:
                _prepare(connection, path)
            except BaseException:
                connection.close()
                raise
            return connection
    finally:
        ready.set()


def _commit_as_the_store_does(connection: sqlite3.Connection) -> None:
    """Both writing connections' settings, which are each connection's own."""
    # WAL + NORMAL: a power cut may lose the last commits but never corrupts.
    connection.execute("PRAGMA synchronous = NORMAL")
    # Checkpoints run on their own thread (_checkpoint.py); this is the bound.
    connection.execute(f"PRAGMA wal_autocheckpoint = {FALLBACK_PAGES}")
    # A group's savepoints journal the pages they change. Past 64 KiB SQLite
    # spills that journal to a temporary file: under load one per few
    # verifications, and a write syscall for each page. In memory it holds at
    # most one copy of each page the group's own writes change.
    connection.execute("PRAGMA temp_store = MEMORY")
    # This SQLite is built with SECURE_DELETE: every page a delete frees (an
    # outbox item's overflow page, deleted by the relay) was zeroed and
    # written to the WAL, a frame per verification. FAST zeroes deleted
    # content only on pages the write changes anyway; in WAL mode the old
    # versions stayed in the WAL until a checkpoint regardless.
    connection.execute("PRAGMA secure_delete = FAST")


_UPGRADES = {0: _DDL, 1: _MIGRATE_FROM_1}


def _prepare(connection: sqlite3.Connection, path: str) -> None:
    if path != MEMORY:
        (mode,) = connection.execute("PRAGMA journal_mode = WAL").fetchone()
        if mode != "wal":
            raise ConfigurationError(
                f"SQLite cannot use WAL mode for {path} (got {mode})",
                hint="Put the data directory on a local file system.",
            )
    _commit_as_the_store_does(connection)
    connection.execute("BEGIN IMMEDIATE")
    try:
        (version,) = connection.execute("PRAGMA user_version").fetchone()
        if version in _UPGRADES:
            for statement in _UPGRADES[version]:
                connection.execute(statement)
            connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        elif version != SCHEMA_VERSION:
            raise ConfigurationError(
                f"The SQLite store {path} has layout version {version}, newer than this "
                f"build's ({SCHEMA_VERSION})",
                hint="Upgrade proofgate to a build that reads it; a store is never "
                "migrated backwards.",
            )
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise


def connect_checkpointer(path: str, ready: threading.Event) -> sqlite3.Connection:
    """Waits ``FULL_WAIT_SECONDS`` for a lock, not the store's timeout: a FULL
    checkpoint holds the write lock while it waits (``_checkpoint.py``)."""
    ready.wait()
    with _opening(path):
        return _connect(path, FULL_WAIT_SECONDS, cache_mib=1)


def connect_loop(
    path: str, timeout: float, ready: threading.Event, cache_mib: int = DEFAULT_CACHE_MIB
) -> sqlite3.Connection:
    """The event loop thread's connection, for its reads (``_inline.py``) and
    its group commits (``_inline_writer.py``), which commit as the writer
    thread's do. One connection for both: SQLite drops a connection's page
    cache whenever another connection has committed since its last read, so
    a reader of its own reloaded every page it read after each group commit."""
    ready.wait()
    with _opening(path):
        connection = _connect(path, timeout, cache_mib)
        _commit_as_the_store_does(connection)
        return connection
