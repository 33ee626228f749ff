"""The loops that keep the pipeline's background work going."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import NoReturn

__all__ = ["repeat"]

logger = logging.getLogger("proofgate.pipeline")


async def repeat(
    step: Callable[[], Awaitable[object]],
    interval: timedelta,
    *,
    failure: str,
    wake: asyncio.Event | None = None,
) -> NoReturn:
    """Runs ``step`` until cancelled, ``interval`` apart or as soon as ``wake``
    is set. A failed step is logged with ``failure`` and the loop goes on: the
    next step retries whatever the failed one left undone."""
    seconds = interval.total_seconds()
    while True:
        try:
            await step()
        except Exception:
            logger.exception(failure)
        if wake is None:
            await asyncio.sleep(seconds)
            continue
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(wake.wait(), seconds)
        wake.clear()
