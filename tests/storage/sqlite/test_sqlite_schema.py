"""The writing connections' settings (storage/sqlite/_schema.py), by what
they do to the WAL."""

from __future__ import annotations

import threading
from pathlib import Path

from storage import Delete, Key, Put
from storage.sqlite._schema import connect_loop, connect_writer
from storage.sqlite._writes import commit_group

_FRAME = 4096 + 24
_KEY = Key("P#big", "META")


def test_a_delete_does_not_write_the_pages_it_frees(tmp_path: Path) -> None:
    """An item of ~40 KB spills into ten overflow pages; deleting it frees
    them to the freelist without writing each to the WAL."""
    path = str(tmp_path / "store.db")
    ready = threading.Event()
    connect_writer(path, 1.0, ready).close()
    connection = connect_loop(path, 1.0, ready)
    put = Put({"PK": _KEY.pk, "SK": _KEY.sk, "text": "x" * 40_000})
    [(stored, _)] = commit_group(connection, [put])
    assert stored
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    [(deleted, _)] = commit_group(connection, [Delete(_KEY)])
    assert deleted
    frames = (Path(path + "-wal").stat().st_size - 32) // _FRAME
    assert 0 < frames <= 4  # the leaf, the freelist's trunk, page 1
