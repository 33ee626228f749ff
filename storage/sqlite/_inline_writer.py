"""Group commits on the event loop's own thread, when the write lock is free.

A commit handed to the writer thread costs the loop a hop each way, and
under load each of the commit's statements also waits to take the GIL back
from the loop's thread (docs/design.md, Storage). In WAL mode with
``synchronous = NORMAL`` a commit writes its WAL frames and syncs nothing, so
a group commit on the loop's thread costs less than the hand-off. But the
loop must never wait for a lock: this connection waits for none, and when
another connection holds the write lock (another process, the TTL sweep on
the writer thread) the group goes to the writer thread, which waits for it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from domain.errors import ServiceUnavailable

from ._writes import Outcome, Request, try_commit_group

__all__ = ["InlineWriter"]


class InlineWriter:
    def __init__(self, connect: Callable[[], sqlite3.Connection]) -> None:
        """Connects on the first commit, on the loop's thread, which is the
        only thread that uses the connection afterwards."""
        self._connect = connect
        self._connection: sqlite3.Connection | None = None
        self._stopped = False

    def try_commit(self, requests: Sequence[Request]) -> list[Outcome] | None:
        """The group's outcomes, or None, having written nothing, when the
        write lock is taken."""
        if self._stopped:
            raise ServiceUnavailable("The SQLite store is closed")
        if self._connection is None:
            try:
                self._connection = self._connect()
            except Exception:
                return None  # the writer thread's connection reports it
        return try_commit_group(self._connection, requests)

    def stop(self) -> None:
        self._stopped = True
        if self._connection is not None:
            self._connection.close()
            self._connection = None
