"""Frames written on sockets' descriptors by two threads, the loop waiting.

An alert to 10,000 subscribers is 10,000 ``write`` system calls, and uvloop
makes each one holding the GIL on the event loop's thread: one core. On
loopback each call also runs the reader's half of TCP (its receive path and
its wake-up), and the kernel is most of the fan-out's time (docs/design.md,
Alert fan-out). ``os.write`` lets go of the GIL in the kernel, so here the
loop's thread writes half of a batch while one more thread writes the other
half, and the loop's thread waits for both before it returns to the loop.

That wait is what makes it safe. While a socket is lent the loop runs
nothing: no other frame is written on it, it is not closed, and its
descriptor cannot be closed and handed to a new connection in the meantime.
The caller lends only a socket whose transport holds nothing (a frame
written past the transport would overtake what it queued), and gives
what the kernel did not take (a partial write's rest; the whole frame when
the socket would block or the write failed) to the transport right after,
before anything else can be written on it: uvloop queues it, or meets the
error itself and closes the connection as it would have.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

__all__ = ["SHARED_FROM", "LentWrites", "Unwritten"]

SHARED_FROM = 32
"""Fewer frames than this are all written on the loop's thread: handing
half to the other thread and waiting for it costs more than it saves."""

Unwritten = dict[int, tuple[bytes, str]]
"""By position in the lent batch: what the kernel did not take of that
frame, and why (the cause counted as the lane's fallback)."""


class LentWrites:
    """The other thread, made on the first batch worth sharing."""

    __slots__ = ("_pool",)

    def __init__(self) -> None:
        self._pool: ThreadPoolExecutor | None = None

    def write(self, lent: list[tuple[int, bytes]]) -> Unwritten:
        """Each ``(descriptor, frame)`` written; what was not, by position."""
        half = len(lent) // 2
        if len(lent) < SHARED_FROM:
            return _write_each(lent, 0, len(lent))
        pool = self._pool
        if pool is None:
            pool = self._pool = ThreadPoolExecutor(1, thread_name_prefix="proofgate-writer")
        other = pool.submit(_write_each, lent, half, len(lent))
        try:
            unwritten = _write_each(lent, 0, half)
        finally:
            # Never back to the loop while the other thread holds a socket.
            theirs = other.result()
        if theirs:
            unwritten.update(theirs)
        return unwritten

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None


def _write_each(lent: list[tuple[int, bytes]], start: int, stop: int) -> Unwritten:
    unwritten: Unwritten = {}
    write = os.write
    for position in range(start, stop):
        descriptor, frame = lent[position]
        try:
            sent = write(descriptor, frame)
        except BlockingIOError:
            unwritten[position] = (frame, "socket would block")
            continue
        except OSError:
            unwritten[position] = (frame, "write failed")
            continue
        if sent != len(frame):
            unwritten[position] = (frame[sent:], "partial write")
    return unwritten
