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
from ._worker import Worker, translate
from ._writes import Outcome, Request, commit_group

__all__ = ["GROUP_MAX", "GroupCommitter"]

GROUP_MAX = 64
"""Writes per commit at most, so one group never holds the lock for long."""

_Waiting = tuple[Request, "asyncio.Future[float]"]


class GroupCommitter:
    def __init__(self, writer: Worker, committed: Callable[[], None] | None = None) -> None:
        """``committed`` is called after each group's COMMIT."""
        self._writer = writer
        self._committed = committed
        self._waiting: deque[_Waiting] = deque()
        self._running = False
        """A group is on the writer thread; new writes wait for the next."""

    def write(self, action: WriteAction) -> asyncio.Future[float]:
        return self._submit(action)

    def transact_write(self, actions: Sequence[WriteAction]) -> asyncio.Future[float]:
        return self._submit(list(actions))

    def _submit(self, request: Request) -> asyncio.Future[float]:
        future: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self._waiting.append((request, future))
        if not self._running:
            self._send()
        return future

    def _send(self) -> None:
        waiting = self._waiting
        group = [waiting.popleft() for _ in range(min(len(waiting), GROUP_MAX))]
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
        outcomes: list[Outcome] = [(False, error)] * len(group) if error else done.result()
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
            self._send()
