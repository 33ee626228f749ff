"""WAL checkpoints (storage/sqlite/_checkpoint.py): a checkpoint that finds
more than the mark in the WAL copies everything, including the commits made
while it copied, so the next commit starts the WAL over; below the mark it
never waits for the write lock."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from storage.sqlite._checkpoint import FULL_WAIT_SECONDS, checkpoint
from storage.sqlite._schema import connect_checkpointer

MARK = 20
Store = tuple[sqlite3.Connection, sqlite3.Connection, sqlite3.Connection]


def _connect(path: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(path, timeout=5, isolation_level=None, check_same_thread=False)
    connection.execute("PRAGMA synchronous = NORMAL")
    connection.execute("PRAGMA wal_autocheckpoint = 0")  # only the test checkpoints
    return connection


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """A writer, a reader and the checkpoint's connection to one WAL file."""
    path = tmp_path / "wal.sqlite"
    writer = _connect(path)
    writer.execute("PRAGMA journal_mode = WAL")
    writer.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB)")
    connections = (writer, _connect(path), _connect(path))
    yield connections
    for connection in connections:
        connection.close()


def _write(writer: sqlite3.Connection, commits: int) -> None:
    for _ in range(commits):
        writer.execute("INSERT INTO t (v) VALUES (randomblob(3000))")


def _wal_pages(connection: sqlite3.Connection) -> int:
    """Frames in the WAL: a restart brings them back to the last commit's."""
    pages: int = connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1]
    return pages


def _commits_made_while_checkpointing(
    writer: sqlite3.Connection, reader: sqlite3.Connection
) -> threading.Timer:
    """A reader holds the snapshot from before the last commits, so a
    checkpoint cannot copy them without waiting for it, as it cannot copy
    the commits made while it runs; the reader finishes shortly after."""
    _write(writer, MARK)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM t").fetchone()
    _write(writer, MARK)
    finish = threading.Timer(0.05, reader.execute, ("COMMIT",))
    finish.start()
    return finish


def test_past_the_mark_a_checkpoint_copies_the_commits_made_meanwhile_and_the_wal_restarts(
    store: Store,
) -> None:
    writer, reader, checkpointer = store
    finish = _commits_made_while_checkpointing(writer, reader)

    assert checkpoint(checkpointer, restart_mark=MARK) is True
    finish.join()
    _write(writer, 1)

    assert _wal_pages(checkpointer) < MARK, "the next commit started the WAL over"


def test_below_the_mark_a_checkpoint_does_not_wait_and_the_wal_keeps_growing(
    store: Store,
) -> None:
    writer, reader, checkpointer = store
    finish = _commits_made_while_checkpointing(writer, reader)

    assert checkpoint(checkpointer, restart_mark=10 * MARK) is False
    finish.join()
    _write(writer, 1)

    assert _wal_pages(checkpointer) > 2 * MARK, "the commits past the reader's snapshot stayed"


def test_a_reader_left_open_holds_writers_up_for_the_full_wait_only(
    tmp_path: Path, store: Store
) -> None:
    """A read transaction left open elsewhere: the FULL checkpoint waits for
    it ``FULL_WAIT_SECONDS``, not the store's timeout, then lets go of the
    write lock, and the next checkpoint after the reader finishes catches up."""
    writer, reader, _ = store
    opened = threading.Event()
    opened.set()
    checkpointer = connect_checkpointer(str(tmp_path / "wal.sqlite"), opened)
    try:
        (wait_ms,) = checkpointer.execute("PRAGMA busy_timeout").fetchone()
        assert wait_ms == FULL_WAIT_SECONDS * 1000
        _write(writer, MARK)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM t").fetchone()
        _write(writer, MARK)

        assert checkpoint(checkpointer, restart_mark=MARK) is True
        writer.execute("PRAGMA busy_timeout = 0")
        _write(writer, 1)  # the write lock is free again
        reader.execute("COMMIT")
        assert _wal_pages(checkpointer) > 2 * MARK, "not restarted while the reader held on"

        assert checkpoint(checkpointer, restart_mark=MARK) is True
        _write(writer, 1)
        assert _wal_pages(checkpointer) < MARK
    finally:
        checkpointer.close()
