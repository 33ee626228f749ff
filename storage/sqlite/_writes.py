"""PutItem, UpdateItem, DeleteItem and TransactWriteItems in SQLite transactions.

Every write takes the write lock up front (BEGIN IMMEDIATE), so the image its
condition is evaluated against is the one it replaces, across processes too.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from domain.errors import ConditionFailed, LimitExceeded

from ..conditions import evaluate
from ..table import TABLE
from ..values import Item
from ..writes import ConditionCheck, Delete, Put, Update, WriteAction
from ._capacity import write_units
from ._codec import decode_item
from ._reads import BATCH_STATEMENTS
from ._rows import store
from ._schema import DELETE, SELECT_ITEM, SELECT_SIZE, index_columns
from ._update import apply_sized_update
from ._worker import is_busy

__all__ = ["Outcome", "Request", "commit_group", "try_commit_group"]

_PK_COLUMN, _SK_COLUMN = index_columns(TABLE.primary)


def _needs_image(action: WriteAction) -> bool:
    return action.condition is not None or isinstance(action, Update)


def _read(connection: sqlite3.Connection, action: WriteAction) -> tuple[str | None, int]:
    """The current item's stored form (when the action needs it) and size."""
    statement = SELECT_ITEM if _needs_image(action) else SELECT_SIZE
    rows = connection.execute(statement, action.key).fetchall()
    return (rows[0][0], rows[0][1]) if rows else (None, 0)


# One statement reads the rows of a transaction's actions, as batch_get does
# (storage/sqlite/_reads.py): each statement of the writer thread hands the
# GIL to the loop's thread and takes it back, and a scan's six actions were
# twelve such steps one by one.
_ROWS = {
    size: statement.replace(
        "SELECT data, size", f"SELECT items.{_PK_COLUMN}, items.{_SK_COLUMN}, data, size"
    )
    for size, statement in BATCH_STATEMENTS.items()
}


def _read_all(
    connection: sqlite3.Connection, actions: Sequence[WriteAction]
) -> list[tuple[str | None, int]]:
    """``_read`` of every action, in one statement; the actions' keys are distinct."""
    if len(actions) == 1:
        return [_read(connection, actions[0])]
    keys = [action.key for action in actions]
    size = next(s for s in BATCH_STATEMENTS if s >= len(keys))
    params = [part for key in keys for part in key]
    params.extend(("", "") * (size - len(keys)))  # no item has an empty key
    found = {
        (pk, sk): (data, size) for pk, sk, data, size in connection.execute(_ROWS[size], params)
    }
    reads: list[tuple[str | None, int]] = []
    for action, key in zip(actions, keys, strict=True):
        data, item_size = found.get(key, (None, 0))
        reads.append((data if _needs_image(action) else None, item_size))
    return reads


def _check(action: WriteAction, index: int, data: str | None) -> Item | None:
    """The current image, decoded only when the action needs it; raises when
    the action's condition does not hold."""
    if not _needs_image(action):
        return None
    current = decode_item(data) if data is not None else None
    if not evaluate(action.condition, current):
        raise ConditionFailed(
            f"The condition of action {index} ({type(action).__name__}) did not hold",
            index=index,
            key=action.key,
        )
    return current


def _apply(
    connection: sqlite3.Connection, action: WriteAction, current: Item | None, old_size: int
) -> int:
    """Applies the action; returns the size it is billed for: the larger of
    the old and new images."""
    match action:
        case Put(item=item, size=size):
            return max(old_size, store(connection, item, size, old_size, current))
        case Update():
            item, size = apply_sized_update(current, old_size, action)
            return max(old_size, store(connection, item, size, old_size, current))
        case Delete():
            if old_size:
                connection.execute(DELETE, action.key)
            return old_size
        case ConditionCheck():
            return old_size
    raise AssertionError(action)


def _write(connection: sqlite3.Connection, action: WriteAction) -> float:
    """One non-transactional write. A ConditionCheck has no such API in
    DynamoDB and is billed as the one-action transaction it would be there."""
    data, old_size = _read(connection, action)
    current = _check(action, 0, data)
    size = _apply(connection, action, current, old_size)
    return write_units(size, transactional=isinstance(action, ConditionCheck))


def _transact(connection: sqlite3.Connection, actions: Sequence[WriteAction]) -> float:
    """All or nothing: every condition is evaluated before anything is
    written, and the first that fails names its action."""
    if len({action.key for action in actions}) != len(actions):
        raise LimitExceeded("A transaction cannot include two actions on one item")
    reads = _read_all(connection, actions)
    currents = [
        _check(action, i, data)
        for i, (action, (data, _)) in enumerate(zip(actions, reads, strict=True))
    ]
    return sum(
        write_units(_apply(connection, action, current, old_size), transactional=True)
        for action, current, (_, old_size) in zip(actions, currents, reads, strict=True)
    )


Request = WriteAction | list[WriteAction]
"""A TransactWriteItems of a list of actions, or a single write of one."""
Outcome = tuple[bool, "float | BaseException"]


def _one(connection: sqlite3.Connection, request: Request) -> float:
    if isinstance(request, list):
        return _transact(connection, request)
    return _write(connection, request)


def commit_group(connection: sqlite3.Connection, requests: Sequence[Request]) -> list[Outcome]:
    """Several writes in one SQLite transaction, each in a savepoint of its
    own: one that fails (a condition, a limit) is rolled back alone and
    fails alone; the others commit together. One commit for the group is
    the point: the WAL frames of pages they share (the brand's counters, the
    outbox's index) are written once, and the fixed cost of a commit is paid
    once. Nothing is acknowledged before the COMMIT; a COMMIT that fails
    fails every request of the group (docs/design.md, Storage)."""
    try:
        connection.execute("BEGIN IMMEDIATE")
    except Exception as error:
        return [(False, error)] * len(requests)
    return _commit_begun(connection, requests)


def try_commit_group(
    connection: sqlite3.Connection, requests: Sequence[Request]
) -> list[Outcome] | None:
    """``commit_group``, or None at once, having done nothing, when another
    connection holds the write lock (``connection`` waits for no lock)."""
    try:
        connection.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as error:
        if is_busy(error):
            return None
        return [(False, error)] * len(requests)
    return _commit_begun(connection, requests)


def _commit_begun(connection: sqlite3.Connection, requests: Sequence[Request]) -> list[Outcome]:
    try:
        if len(requests) == 1:
            outcomes: list[Outcome] = [(True, _one(connection, requests[0]))]
        else:
            outcomes = [_in_savepoint(connection, request) for request in requests]
        connection.execute("COMMIT")
    except Exception as error:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        return [(False, error)] * len(requests)
    return outcomes


def _in_savepoint(connection: sqlite3.Connection, request: Request) -> Outcome:
    connection.execute("SAVEPOINT request")
    try:
        outcome: Outcome = (True, _one(connection, request))
    except Exception as error:
        # A statement error that ended the transaction makes this ROLLBACK
        # TO fail too, and with it the whole group.
        connection.execute("ROLLBACK TO request")
        outcome = (False, error)
    connection.execute("RELEASE request")
    return outcome
