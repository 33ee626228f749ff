"""A duty a process does on a clock while the app runs: trimming the
allocator, writing its gauges for the other workers.

A duty that fails is logged and tried again next period, never allowed to
end the loop: the next period may well succeed, and a process that silently
stopped trimming or counting is worse than a log line a minute.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

__all__ = ["every"]

logger = logging.getLogger("proofgate.runtime")


@contextlib.asynccontextmanager
async def every(
    seconds: float, duty: Callable[[], Awaitable[object]], failure: str
) -> AsyncIterator[None]:
    """Runs ``duty`` every ``seconds`` while the block runs, the first time
    one period in; ``failure`` is the log line when it raises."""
    task = asyncio.create_task(_repeat(seconds, duty, failure))
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def _repeat(seconds: float, duty: Callable[[], Awaitable[object]], failure: str) -> None:
    while True:
        await asyncio.sleep(seconds)
        try:
            await duty()
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception(failure)
