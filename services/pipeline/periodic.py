"""The loops that keep the pipeline's background work going, and how they
report a run of failures (docs/design.md, "Operations")."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import NoReturn

__all__ = ["SUMMARY_INTERVAL", "FailureReport", "repeat"]

logger = logging.getLogger("proofgate.pipeline")

SUMMARY_INTERVAL = timedelta(minutes=1)


class FailureReport:
    """The first failure of a run with its traceback, then one line per
    ``every`` while the step keeps failing, and one when it recovers: a store
    that is down fails every poll, and a traceback per poll buries the log."""

    def __init__(
        self,
        failure: str,
        *,
        every: timedelta = SUMMARY_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._failure = failure
        self._every = every.total_seconds()
        self._clock = clock
        self._failing_since: float | None = None
        self._reported_at = 0.0
        self._unreported = 0

    def failed(self, error: BaseException) -> None:
        now = self._clock()
        if self._failing_since is None:
            self._failing_since = self._reported_at = now
            self._unreported = 0
            logger.error("%s", self._failure, exc_info=error)
            return
        self._unreported += 1
        if now - self._reported_at >= self._every:
            logger.error(
                "%s: failed %d more times in the last %.0f s, still failing: %s",
                self._failure,
                self._unreported,
                now - self._reported_at,
                _first_line(error),
            )
            self._reported_at = now
            self._unreported = 0

    def succeeded(self) -> None:
        if self._failing_since is None:
            return
        logger.info(
            "%s: recovered after %.0f s", self._failure, self._clock() - self._failing_since
        )
        self._failing_since = None


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


async def repeat(
    step: Callable[[], Awaitable[object]],
    interval: timedelta,
    *,
    failure: str,
    wake: asyncio.Event | None = None,
    report: FailureReport | None = None,
    idle_interval: timedelta | None = None,
) -> NoReturn:
    """Runs ``step`` until cancelled, ``interval`` apart or as soon as ``wake``
    is set. A failed step is reported under ``failure`` and the loop goes on:
    the next step retries whatever the failed one left undone.

    With ``idle_interval``, a step that found nothing to do (a falsy result)
    doubles the wait before the next, up to ``idle_interval``; a step that did
    something, a failure or a wake brings it back to ``interval``. An idle
    gateway then polls a few times a second at most (docs/design.md, Pipeline)."""
    base = interval.total_seconds()
    longest = max(base, idle_interval.total_seconds()) if idle_interval is not None else base
    seconds = base
    failures = report or FailureReport(failure)
    while True:
        try:
            result = await step()
        except Exception as error:
            failures.failed(error)
            seconds = base
        else:
            failures.succeeded()
            seconds = (
                min(longest, 2 * seconds) if idle_interval is not None and not result else base
            )
        if wake is None:
            await asyncio.sleep(seconds)
            continue
        # asyncio.timeout, not wait_for: on 3.11, wait_for swallows a
        # cancellation that arrives as ``wake`` is set, and the loop never ends.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await wake.wait()
                seconds = base
        wake.clear()
