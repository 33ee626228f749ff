"""WebSockets close with 1001 (going away) when a served process is told to stop.

uvicorn's shutdown closes every WebSocket with 1012 itself, before the
application hears of it. So the first SIGTERM or SIGINT is taken here first:
open WebSockets are closed with 1001 and new ones refused the same way, then
uvicorn's own handler runs and stops accepting, finishes in-flight requests
within ``PROOFGATE_SHUTDOWN_SECONDS`` and runs the lifespan's shutdown, which
releases the relay's leases (docs/design.md, "Operations"). Installed only by
``serve``, once start-up completed: tests that run the app in-process keep
their signal handlers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from functools import partial
from types import FrameType
from typing import Any

from starlette.applications import Starlette

from api.runtime.startup_hook import AfterStartup
from api.ws.connections import CLOSE_GOING_AWAY

__all__ = ["GoingAwayOnExit"]

logger = logging.getLogger("proofgate.api")

_SIGNALS = (signal.SIGTERM, signal.SIGINT)
_CLOSE_ALL_SECONDS = 5.0


class GoingAwayOnExit(AfterStartup):
    app: Starlette

    def __init__(self, app: Starlette) -> None:
        super().__init__(app)
        self._going: asyncio.Task[None] | None = None

    def started(self) -> None:
        self._install(asyncio.get_running_loop())

    def _install(self, loop: asyncio.AbstractEventLoop) -> None:
        for number in _SIGNALS:
            previous = signal.getsignal(number)
            if callable(previous):
                signal.signal(number, partial(self._on_signal, loop, previous))

    def _on_signal(
        self, loop: asyncio.AbstractEventLoop, previous: Any, number: int, frame: FrameType | None
    ) -> None:
        if self._going is not None:
            # A second signal goes straight through: uvicorn force-quits on it.
            previous(number, frame)
            return
        loop.call_soon_threadsafe(self._start, previous, number, frame)

    def _start(self, previous: Any, number: int, frame: FrameType | None) -> None:
        if self._going is None:
            self._going = asyncio.create_task(self._go_away(previous, number, frame))

    async def _go_away(self, previous: Any, number: int, frame: FrameType | None) -> None:
        try:
            graphql = getattr(self.app.state, "graphql", None)
            if graphql is not None:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(_CLOSE_ALL_SECONDS):
                        closed = await graphql.connections.close_all(*CLOSE_GOING_AWAY)
                        logger.info("Closed %d WebSockets: the server is going away", closed)
        finally:
            previous(number, frame)
