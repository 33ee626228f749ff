"""WAL checkpoints on a thread of their own, off the write path.

SQLite checkpoints inside the COMMIT that pushes the WAL past
``wal_autocheckpoint`` pages: that commit copies the WAL into the database
and syncs it, and every write queued behind it waits (docs/design.md,
Storage). So the writer's automatic
checkpoint is moved far out (``FALLBACK_PAGES``, the bound on the WAL should
this thread fall behind), and this thread runs a PASSIVE checkpoint, which
never takes the write lock, after writes have committed: at most one per
``MIN_GAP_SECONDS``, none while the store is idle. Not much more often: each
checkpoint copies every page the WAL holds and syncs twice, and hot pages
(the brand's counters) are copied again by each; at 0.1 s a verification
cost a quarter more CPU than at 1 s.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable

__all__ = ["FALLBACK_PAGES", "MIN_GAP_SECONDS", "Checkpointer"]

log = logging.getLogger(__name__)

FALLBACK_PAGES = 10_000
"""The writer's own ``wal_autocheckpoint``: 40 MB of WAL at 4 KB pages."""
MIN_GAP_SECONDS = 1.0


class Checkpointer:
    def __init__(self, connect: Callable[[], sqlite3.Connection]) -> None:
        self._due = threading.Event()
        self._stopped = False
        self.checkpoints = 0
        self._thread = threading.Thread(
            target=self._run, args=(connect,), name="proofgate-sqlite-checkpoint", daemon=True
        )
        self._thread.start()

    def nudge(self) -> None:
        """Writes have committed: checkpoint soon."""
        if not self._due.is_set():
            self._due.set()

    def stop(self) -> None:
        self._stopped = True
        self._due.set()
        self._thread.join()

    def _run(self, connect: Callable[[], sqlite3.Connection]) -> None:
        try:
            connection = connect()
        except Exception:
            log.exception("The WAL checkpoint thread cannot open the store; the writer checkpoints")
            return
        try:
            while True:
                self._due.wait()
                if self._stopped:
                    return
                self._due.clear()
                try:
                    connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                    self.checkpoints += 1
                except sqlite3.Error as error:
                    log.warning("WAL checkpoint failed (%s); the next commit retries it", error)
                time.sleep(MIN_GAP_SECONDS)
        finally:
            connection.close()
