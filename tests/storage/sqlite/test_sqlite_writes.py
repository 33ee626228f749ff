"""A transaction's current images read in one statement
(storage/sqlite/_writes.py ``_read_all``) against one read per action."""

from __future__ import annotations

import sqlite3
import threading
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from storage import ConditionCheck, Delete, ItemExists, Key, Put, Update
from storage.sqlite._codec import decode_item
from storage.sqlite._schema import MEMORY, connect_writer
from storage.sqlite._writes import _read, _read_all, commit_group
from storage.values import item_size
from storage.writes import WriteAction


def write(connection: sqlite3.Connection, action: WriteAction) -> None:
    [(committed, outcome)] = commit_group(connection, [action])
    assert committed, outcome


_KEYS = [Key(f"P#{n}", sk) for n in range(4) for sk in ("META", "S#1", "S#%23")]


def _connection() -> sqlite3.Connection:
    connection = connect_writer(MEMORY, 1.0, threading.Event())
    for n, key in enumerate(_KEYS[::2]):  # every other key holds an item
        write(connection, Put({"PK": key.pk, "SK": key.sk, "n": n, "text": "x" * n * 100}))
    return connection


_CONNECTION = _connection()


def _action(key: Key, kind: int) -> WriteAction:
    return [
        Put({"PK": key.pk, "SK": key.sk}),
        Put({"PK": key.pk, "SK": key.sk}, ItemExists()),
        Update(key, add={"n": 1}),
        Delete(key),
        ConditionCheck(key, ItemExists()),
    ][kind]


@given(
    st.lists(
        st.tuples(st.sampled_from(_KEYS), st.integers(0, 4)),
        min_size=1,
        max_size=len(_KEYS),
        unique_by=lambda pair: pair[0],
    )
)
def test_one_statement_reads_what_one_read_per_action_reads(
    pairs: list[tuple[Key, int]],
) -> None:
    actions = [_action(key, kind) for key, kind in pairs]
    expected = [_read(_CONNECTION, action) for action in actions]
    assert _read_all(_CONNECTION, actions) == expected


def test_a_row_keeps_its_items_size_through_updates() -> None:
    """An Update measures its new image from the row's size column
    (``apply_sized_update``), so the column must stay ``item_size`` of the
    stored item whatever the updates do."""
    connection = connect_writer(MEMORY, 1.0, threading.Event())
    key = Key("P#sized", "META")
    write(connection, Put({"PK": key.pk, "SK": key.sk, "text": "é" * 10, "n": 7}))
    for update in [
        Update(key, add={"n": 10**20, "fresh": 1}, set_if_absent={"entity": "Day"}),
        Update(key, set={"text": "plain", "list": [1, "two", None]}, remove=("fresh",)),
        Update(key, add={"n": Decimal("0.25")}, set_if_absent={"text": "ignored"}),
        Update(Key("P#sized", "NEW"), add={"n": 1}),
    ]:
        write(connection, update)
        data, size = _read(connection, update)
        assert data is not None
        assert size == item_size(decode_item(data))
