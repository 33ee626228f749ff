"""An existing row updated in place (storage/sqlite/_rows.py) against the row
INSERT OR REPLACE writes: the same rows, the same index reads."""

from __future__ import annotations

import sqlite3
import threading

from hypothesis import given, settings
from hypothesis import strategies as st

from storage import ItemExists, Key, Put, Update
from storage.sqlite._codec import decode_item, encode_item
from storage.sqlite._schema import MEMORY, UPSERT, connect_writer, expiry, row_keys
from storage.sqlite._writes import commit_group
from storage.values import item_size
from storage.writes import WriteAction

_KEYS = [Key("P#1", "META"), Key("P#1", "S#1"), Key("P#2", "META")]
_ROWS = "SELECT * FROM items ORDER BY pk, sk"
_GSI1 = "SELECT pk, sk FROM items INDEXED BY items_gsi1 WHERE gsi1pk = ? ORDER BY gsi1sk, pk, sk"
_GSI2 = "SELECT pk, sk FROM items INDEXED BY items_gsi2 WHERE gsi2pk = ? ORDER BY gsi2sk, pk, sk"
_TTL = (
    "SELECT pk, sk FROM items INDEXED BY items_ttl WHERE expiresat >= 0 ORDER BY expiresat, pk, sk"
)


def _connection() -> sqlite3.Connection:
    return connect_writer(MEMORY, 1.0, threading.Event())


def _write(connection: sqlite3.Connection, action: WriteAction) -> None:
    [(committed, outcome)] = commit_group(connection, [action])
    assert committed, outcome


def _replaced(connection: sqlite3.Connection) -> sqlite3.Connection:
    """The stored items written again by INSERT OR REPLACE, as before."""
    items = [decode_item(data) for (data,) in connection.execute("SELECT data FROM items")]
    reference = _connection()
    for item in items:
        row = (*row_keys(item), expiry(item), item_size(item), encode_item(item))
        reference.execute(UPSERT, row)
    return reference


def _reads(connection: sqlite3.Connection) -> list[list[tuple[object, ...]]]:
    return [
        connection.execute(_ROWS).fetchall(),
        *(connection.execute(q, (p,)).fetchall() for q in (_GSI1, _GSI2) for p in ("A", "B")),
        connection.execute(_TTL).fetchall(),
        connection.execute("PRAGMA integrity_check").fetchall(),
    ]


def test_an_update_of_a_gsi_key_moves_the_item_in_the_index() -> None:
    connection = _connection()
    key = _KEYS[0]
    _write(connection, Put({"PK": key.pk, "SK": key.sk, "GSI1PK": "A", "GSI1SK": "1"}))
    _write(connection, Update(key, set={"GSI1PK": "B"}))
    assert connection.execute(_GSI1, ("A",)).fetchall() == []
    assert connection.execute(_GSI1, ("B",)).fetchall() == [(key.pk, key.sk)]


def test_an_update_of_other_attributes_keeps_the_index_and_ttl_entries() -> None:
    connection = _connection()
    key = _KEYS[0]
    _write(
        connection, Put({"PK": key.pk, "SK": key.sk, "GSI2PK": "A", "GSI2SK": "x", "expiresAt": 9})
    )
    _write(connection, Update(key, add={"n": 1}, condition=ItemExists()))
    assert connection.execute(_GSI2, ("A",)).fetchall() == [(key.pk, key.sk)]
    assert connection.execute(_TTL).fetchall() == [(key.pk, key.sk)]
    assert connection.execute("SELECT expiresat FROM items").fetchall() == [(9,)]


def test_removing_the_ttl_attribute_clears_the_ttl_column() -> None:
    connection = _connection()
    key = _KEYS[0]
    _write(connection, Put({"PK": key.pk, "SK": key.sk, "expiresAt": 9}))
    _write(connection, Update(key, remove=("expiresAt",)))
    assert connection.execute(_TTL).fetchall() == []
    _write(connection, Update(key, set={"expiresAt": 12}))
    assert connection.execute("SELECT expiresat FROM items").fetchall() == [(12,)]


_INDEXED = st.sampled_from(["GSI1PK", "GSI1SK", "GSI2PK", "GSI2SK", "expiresAt"])
# GSI keys must be strings; the TTL attribute may hold anything.
_ATTRIBUTES = st.dictionaries(_INDEXED, st.sampled_from(["A", "B", 7, 8, True]), max_size=5).map(
    lambda values: {a: v for a, v in values.items() if a == "expiresAt" or isinstance(v, str)}
)
_ACTIONS = st.one_of(
    st.builds(
        lambda key, values, exists: Put(
            {"PK": key.pk, "SK": key.sk, **values}, ItemExists() if exists else None
        ),
        st.sampled_from(_KEYS),
        _ATTRIBUTES,
        st.booleans(),
    ),
    st.builds(
        lambda key, values, remove: Update(
            key, set=values, remove=tuple(a for a in remove if a not in values), add={"n": 1}
        ),
        st.sampled_from(_KEYS),
        _ATTRIBUTES,
        st.lists(_INDEXED, max_size=2, unique=True),
    ),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_ACTIONS, min_size=1, max_size=8))
def test_updated_rows_read_as_rows_written_again_by_replace(
    actions: list[WriteAction],
) -> None:
    connection = _connection()
    for action in actions:
        commit_group(connection, [action])  # a refused write (a condition, a key) changes nothing
    assert _reads(connection) == _reads(_replaced(connection))
