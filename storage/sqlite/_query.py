"""Query as one B-tree range read.

A sort-key condition becomes a lower and an upper bound; an exclusive start
key tightens one of them, so resuming a page seeks instead of re-reading the
items before it. begins_with is a range up to the prefix's successor, never
LIKE (case-insensitive for ASCII). Python compares strings by code point and
SQLite's BINARY collation compares UTF-8 bytes; both agree with DynamoDB's
byte order, so bounds computed here mean the same thing there.
"""

from __future__ import annotations

import sqlite3
from itertools import product
from typing import Any, NamedTuple

from domain.errors import InvalidCursor

from ..driver import QueryRequest, QueryResult
from ..limits import QUERY_PAGE_MAX_BYTES
from ..registry import SortOperator, SortRange
from ..table import TABLE, IndexDefinition, IndexName
from ..values import Item
from ._capacity import read_units
from ._codec import decode_item
from ._schema import index_columns, index_name

__all__ = ["STATEMENTS", "plan", "prefix_successor", "query"]

_PK, _SK = TABLE.primary.partition_key, TABLE.primary.sort_key
_PK_COLUMN, _SK_COLUMN = index_columns(TABLE.primary)
_SURROGATES = range(0xD800, 0xE000)


class _Bound(NamedTuple):
    value: str
    inclusive: bool


def prefix_successor(prefix: str) -> str | None:
    """The least string greater than every string that starts with ``prefix``;
    None when there is none (the prefix is all U+10FFFF)."""
    for position in range(len(prefix) - 1, -1, -1):
        code = ord(prefix[position])
        if code < 0x10FFFF:
            code += 1
            if code in _SURROGATES:
                code = _SURROGATES.stop
            return prefix[:position] + chr(code)
    return None


def _bounds(sort: SortRange) -> tuple[_Bound | None, _Bound | None]:
    value = sort.value
    match sort.operator:
        case SortOperator.EQ:
            return _Bound(value, True), _Bound(value, True)
        case SortOperator.BEGINS_WITH:
            successor = prefix_successor(value)
            return _Bound(value, True), (
                _Bound(successor, False) if successor is not None else None
            )
        case SortOperator.BETWEEN:
            assert sort.upper is not None
            return _Bound(value, True), _Bound(sort.upper, True)
        case SortOperator.LT:
            return None, _Bound(value, False)
        case SortOperator.LTE:
            return None, _Bound(value, True)
        case SortOperator.GT:
            return _Bound(value, False), None
        case SortOperator.GTE:
            return _Bound(value, True), None
    raise AssertionError(sort.operator)


def _tighter_lower(bound: _Bound | None, start: _Bound) -> _Bound:
    if (
        bound is None
        or start.value > bound.value
        or (start.value == bound.value and bound.inclusive)
    ):
        return start
    return bound


def _tighter_upper(bound: _Bound | None, start: _Bound) -> _Bound:
    if (
        bound is None
        or start.value < bound.value
        or (start.value == bound.value and bound.inclusive)
    ):
        return start
    return bound


def _start_value(start: dict[str, str], attribute: str) -> str:
    value = start.get(attribute)
    if not isinstance(value, str):
        raise InvalidCursor()
    return value


def _sql(
    index: IndexDefinition, lower: str | None, upper: str | None, resume: bool, forward: bool
) -> str:
    partition, sort = index_columns(index)
    gsi = index.is_global_secondary
    where = [f"{partition} = ?"]
    if lower:
        where.append(f"{sort} {lower} ?")
    if upper:
        where.append(f"{sort} {upper} ?")
    if resume:
        # On a GSI the sort key may repeat: ties resume on the table key.
        where.append(
            f"({sort} <> ? OR ({_PK_COLUMN}, {_SK_COLUMN}) {'>' if forward else '<'} (?, ?))"
        )
    direction = "ASC" if forward else "DESC"
    order = [sort, _PK_COLUMN, _SK_COLUMN] if gsi else [sort]
    return (
        "SELECT data, size FROM items"
        + (f" INDEXED BY {index_name(index)}" if gsi else "")
        + f" WHERE {' AND '.join(where)}"
        + f" ORDER BY {', '.join(f'{c} {direction}' for c in order)} LIMIT ?"
    )


# Every statement a query can run, built once; a test checks each one's plan.
STATEMENTS: dict[tuple[IndexName, str | None, str | None, bool, bool], str] = {
    (index.name, lower, upper, resume, forward): _sql(index, lower, upper, resume, forward)
    for index in TABLE.indexes
    for lower, upper, forward in product((None, ">=", ">"), (None, "<=", "<"), (True, False))
    for resume in ((False, True) if index.is_global_secondary else (False,))
}


# A GSI position needs the table key too: the GSI's own key may repeat.
_LAST_KEY = {
    index.name: (_PK, _SK, index.partition_key, index.sort_key)
    if index.is_global_secondary
    else (_PK, _SK)
    for index in TABLE.indexes
}


def plan(request: QueryRequest) -> tuple[str, list[Any]]:
    index = request.table_index
    lower, upper = _bounds(request.sort)
    resume: list[str] = []
    start = request.start_key
    if start is not None:
        if start.get(index.partition_key) != request.partition:
            raise InvalidCursor("Cursor belongs to another list")
        position = _start_value(start, index.sort_key)
        if index.is_global_secondary:
            resume = [position, _start_value(start, _PK), _start_value(start, _SK)]
            if request.forward:
                lower = _tighter_lower(lower, _Bound(position, True))
            else:
                upper = _tighter_upper(upper, _Bound(position, True))
        elif request.forward:
            lower = _tighter_lower(lower, _Bound(position, False))
        else:
            upper = _tighter_upper(upper, _Bound(position, False))
    sql = STATEMENTS[
        (
            index.name,
            None if lower is None else (">=" if lower.inclusive else ">"),
            None if upper is None else ("<=" if upper.inclusive else "<"),
            bool(resume),
            request.forward,
        )
    ]
    params: list[Any] = [request.partition]
    if lower is not None:
        params.append(lower.value)
    if upper is not None:
        params.append(upper.value)
    params.extend(resume)
    params.append(request.limit)
    return sql, params


def query(connection: sqlite3.Connection, request: QueryRequest) -> QueryResult:
    """At most ``limit`` items and at most 1 MB of them (but at least one item,
    so a page always advances). The last evaluated key is set whenever either
    limit stopped the read, even if nothing follows, as DynamoDB does."""
    sql, params = plan(request)
    items: list[Item] = []
    total = 0
    cut = False
    cursor = connection.execute(sql, params)
    try:
        for data, size in cursor:
            if items and total + size > QUERY_PAGE_MAX_BYTES:
                cut = True
                break
            items.append(decode_item(data))
            total += size
    finally:
        cursor.close()  # ends the statement's read snapshot
    last_key = None
    if items and (cut or len(items) >= request.limit):
        last = items[-1]
        last_key = {attribute: last[attribute] for attribute in _LAST_KEY[request.table_index.name]}
    return QueryResult(items, last_key, read_units(total, request.consistent))
