"""Group commits on the event loop's own thread, when the write lock is free.

A commit handed to the writer thread costs the loop a hop each way, and
under load each of the commit's statements also waits to take the GIL back
from the loop's thread (docs/design.md, Storage). In WAL mode with
``synchronous = NORMAL`` a commit writes its WAL frames and syncs nothing, so
a group commit on the loop's thread costs less than the hand-off. But the
loop must never wait for a lock: the group's ``BEGIN IMMEDIATE`` waits for
none, and when another connection holds the write lock (another process, the
TTL sweep on the writer thread) the group goes to the writer thread, which
waits for it. The connection is the loop's reads' own (``_inline.py``), so
a commit does not cost those reads their page cache.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from domain.errors import ServiceUnavailable

from ._writes import Outcome, Request, try_commit_group

__all__ = ["InlineWriter"]


class InlineWriter:
    def __init__(self, connection: Callable[[], sqlite3.Connection], timeout: float) -> None:
        """``connection`` opens, on the loop's thread, the connection that
        thread shares with its reads; ``timeout`` is how long those reads
        wait for a lock, restored after each try."""
        self._connection = connection
        self._read_timeout = f"PRAGMA busy_timeout = {int(timeout * 1000)}"
        self._stopped = False

    def try_commit(self, requests: Sequence[Request]) -> list[Outcome] | None:
        """The group's outcomes, or None, having written nothing, when the
        write lock is taken."""
        if self._stopped:
            raise ServiceUnavailable("The SQLite store is closed")
        try:
            connection = self._connection()
        except Exception:
            return None  # the writer thread's connection reports it
        connection.execute("PRAGMA busy_timeout = 0")
        try:
            return try_commit_group(connection, requests)
        finally:
            connection.execute(self._read_timeout)

    def stop(self) -> None:
        self._stopped = True
