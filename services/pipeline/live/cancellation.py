"""Cancellations a wait below swallowed, raised again.

On Python 3.11, ``asyncio.wait_for`` returns its result instead of raising
when what it waits for completes in the loop turn its task is cancelled, and
redis-py (8.1) waits for each command it sends that way. A loop that runs
until cancelled would then run on: cancelled at shutdown, the Redis
channels' loops kept going, and the task group that runs them waited for
them for ever (docs/design.md, Alerts across processes). The task still
counts the request, so each such loop asks at every turn.
"""

from __future__ import annotations

import asyncio

__all__ = ["raise_if_cancelled"]


def raise_if_cancelled() -> None:
    """For a task of its own that runs until cancelled: raises the
    cancellation requested of it, if one was requested and swallowed."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError
