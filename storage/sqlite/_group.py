"""Group commit: writes that arrive while the writer thread is busy commit
together.

Under concurrent load the writer's cost is mostly its commits: each writes
the WAL frames of every page it touched, and a scan's transaction touches
pages the next scan touches again (the brand's counters, the outbox's
index). So each write waits in a queue on the event loop's thread; one job
on the writer thread takes the whole queue (up to ``GROUP_MAX``) and runs it
as one SQLite transaction, each write in a savepoint of its own
(``_writes.commit_group``). A caller's future settles only after the COMMIT,
so nothing is acknowledged that is not committed. An idle store pays
nothing: a lone write is a group of one, and the job is sent at once.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Sequence

from ..writes import WriteAction
from ._inline_writer import InlineWriter
from ._worker import Worker, translate
from ._writes import Outcome, Request, commit_group

__all__ = ["GROUP_MAX", "GroupCommitter"]

GROUP_MAX = 64
"""Writes per commit at most, so one group never holds the lock for long."""

_Waiting = tuple[Request, "asyncio.Future[float]"]


class GroupCommitter:
    def __init__(
        self,
        writer: Worker,
        committed: Callable[[], None] | None = None,
        inline: InlineWriter | None = None,
    ) -> None:
        """``committed`` is called after each group's COMMIT; ``inline``
        commits a group on the loop's thread when the write lock is free."""
        self._writer = writer
        self._committed = committed
        self._inline = inline
        self._waiting: deque[_Waiting] = deque()
        self._running = False
        """A group is on the writer thread; new writes wait for the next."""
        self._flush_due = False
        """A flush on the loop's thread is scheduled."""

    def write(self, action: WriteAction) -> asyncio.Future[float]:
        return self._submit(action)

    def transact_write(self, actions: Sequence[WriteAction]) -> asyncio.Future[float]:
        return self._submit(list(actions))

    def _submit(self, request: Request) -> asyncio.Future[float]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[float] = loop.create_future()
        self._waiting.append((request, future))
        if not self._running:
            self._dispatch(loop)
        return future

    def _dispatch(self, loop: asyncio.AbstractEventLoop) -> None:
        """Writes submitted by the callbacks of one turn of the loop flush
        together at the start of the next."""
        if self._inline is None:
            self._send(self._next_group())
        elif not self._flush_due:
            self._flush_due = True
            loop.call_soon(self._flush)

    def _next_group(self) -> list[_Waiting]:
        waiting = self._waiting
        return [waiting.popleft() for _ in range(min(len(waiting), GROUP_MAX))]

    def _flush(self) -> None:
        self._flush_due = False
        if self._running or not self._waiting:
            return
        assert self._inline is not None
        group = self._next_group()
        try:
            outcomes = self._inline.try_commit([request for request, _ in group])
        except BaseException as error:  # the store is closed
            outcomes = [(False, error)] * len(group)
        if outcomes is None:
            self._send(group)
        else:
            self._finish(group, outcomes)

    def _send(self, group: list[_Waiting]) -> None:
        self._running = True
        try:
            job = self._writer.call(commit_group, [request for request, _ in group])
        except BaseException as error:  # the store is closed
            self._running = False
            for _, future in group:
                future.set_exception(error)
            return
        job.add_done_callback(lambda done: self._settle(group, done))

    def _settle(self, group: list[_Waiting], done: asyncio.Future[list[Outcome]]) -> None:
        self._running = False
        error = asyncio.CancelledError() if done.cancelled() else done.exception()
        self._finish(group, [(False, error)] * len(group) if error else done.result())

    def _finish(self, group: list[_Waiting], outcomes: list[Outcome]) -> None:
        if self._committed is not None and any(succeeded for succeeded, _ in outcomes):
            self._committed()
        for (_, future), (succeeded, value) in zip(group, outcomes, strict=True):
            if future.cancelled():
                continue
            if succeeded:
                assert isinstance(value, float | int)
                future.set_result(float(value))
            else:
                assert isinstance(value, BaseException)
                future.set_exception(translate(value))
        if self._waiting:
            self._dispatch(asyncio.get_running_loop())
