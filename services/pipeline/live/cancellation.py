"""Cancellations a wait below swallowed, raised again.

On Python 3.11, ``asyncio.wait_for`` returns its result instead of raising
when what it waits for completes in the loop turn its task is cancelled, and
redis-py (8.1) waits for each command it sends that way. A loop that runs
until cancelled would then run on (cancelled at shutdown, a Redis channel's
publisher kept sending heartbeats on a closed client), and a socket closed
right after ``subscribe`` cancelled the subscription while it subscribed its
brand's channel, and the registration outlived it
(docs/design.md, Alerts across processes). The task still counts the
request, so each such loop asks at every turn, and a wait that must not
outlive its cancellation asks when it is done.
"""

from __future__ import annotations

import asyncio

__all__ = ["cancellations", "raise_if_cancelled"]


def cancellations() -> int:
    """How many cancellations of the current task are requested so far."""
    task = asyncio.current_task()
    return 0 if task is None else task.cancelling()


def raise_if_cancelled(*, since: int = 0) -> None:
    """Raises a cancellation of the current task requested (after it counted
    ``since``: an older one, handled, is not the caller's) and swallowed."""
    if cancellations() > since:
        raise asyncio.CancelledError
