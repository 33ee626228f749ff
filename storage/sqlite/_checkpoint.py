"""WAL checkpoints on a thread of their own, off the write path.

SQLite checkpoints inside the COMMIT that pushes the WAL past
``wal_autocheckpoint`` pages: that commit copies the WAL into the database
and syncs it, and every write queued behind it waits (docs/design.md,
Storage). So the writers' automatic checkpoint is moved far out
(``FALLBACK_PAGES``, the bound on the WAL should this thread fall behind),
and this thread checkpoints after writes have committed: at most once per
``MIN_GAP_SECONDS``, none while the store is idle. Not much more often: each
checkpoint copies every page the WAL holds and syncs twice, and hot pages
(the brand's counters) are copied again by each; at 0.1 s a verification
cost a quarter more CPU than at 1 s. Not much less often either: a
verification appends ~10 pages to the WAL, so at 1 s a load of 1,000 a
second reaches the fallback bound between two checkpoints.

A PASSIVE checkpoint never takes the write lock, so under a steady stream of
writes it never catches up: the commits made while it copies stay in the
WAL, the WAL is never restarted, and it grows to the fallback bound, where
the commit that crosses it checkpoints on the event loop's thread. So when a
PASSIVE checkpoint leaves more than ``RESTART_MARK_PAGES`` in the WAL, a FULL
one follows: it holds the write lock while it copies the rest (writes meant
for the loop's thread go to the writer thread meanwhile), and the next commit
starts the WAL over from its beginning. A FULL checkpoint also waits, holding
that lock, for every reader of an older snapshot to finish: the store's own
reads take milliseconds, but a read transaction left open in another process
would stop every write for the store's whole timeout, twice a second. So it
waits ``FULL_WAIT_SECONDS`` at most, then gives up until the next.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable

from domain.errors import ConfigurationError

__all__ = [
    "FALLBACK_PAGES",
    "FULL_WAIT_SECONDS",
    "MIN_GAP_SECONDS",
    "RESTART_MARK_PAGES",
    "Checkpointer",
    "checkpoint",
]

log = logging.getLogger(__name__)

FALLBACK_PAGES = 10_000
"""The writer's own ``wal_autocheckpoint``: 40 MB of WAL at 4 KB pages."""
MIN_GAP_SECONDS = 0.5
FULL_WAIT_SECONDS = 0.1
"""How long a FULL checkpoint waits for the write lock and for readers; a
FULL checkpoint of the pages left after a PASSIVE one took 5-20 ms."""
RESTART_MARK_PAGES = 1_000
"""4 MB: a store written to less than this between checkpoints never has
its writers held up by one."""


def checkpoint(connection: sqlite3.Connection, restart_mark: int = RESTART_MARK_PAGES) -> bool:
    """Copies the WAL into the database; True when it also waited for the
    write lock to copy the commits made meanwhile, so the WAL can restart."""
    _, wal_pages, _ = connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    if wal_pages <= restart_mark:
        return False
    connection.execute("PRAGMA wal_checkpoint(FULL)").fetchall()
    return True


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
        except ConfigurationError as error:
            # The writer opened the same path first and reports this to the
            # caller as one line; a traceback here would only come first.
            log.debug("The WAL checkpoint thread cannot open the store: %s", error.message)
            return
        except Exception:
            log.exception("The WAL checkpoint thread cannot open the store; the writer checkpoints")
            return
        try:
            while True:
                self._due.wait()
                if self._stopped:
                    return
                self._due.clear()
                started = time.monotonic()
                try:
                    checkpoint(connection)
                    self.checkpoints += 1
                except sqlite3.Error as error:
                    log.warning("WAL checkpoint failed (%s); the next commit retries it", error)
                # From start to start: the WAL fills while a checkpoint runs too.
                time.sleep(max(0.0, MIN_GAP_SECONDS - (time.monotonic() - started)))
        finally:
            connection.close()
