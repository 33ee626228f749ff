"""When an outbox item's failed attempt is its last, and when the next one is due.

An alert item gives up after ``max_attempts``; a webhook delivery after
``webhook_retry_horizon``, which receivers built for Standard Webhooks expect
to be about a day (docs/design.md, Webhook order).
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from services.pipeline.events import WebhookEvent
from services.pipeline.outbox.items import ClaimedItem
from services.pipeline.settings import PipelineSettings

__all__ = ["gives_up", "retry_delay", "retry_due"]


def retry_delay(attempt: int, settings: PipelineSettings) -> timedelta:
    """Exponential from ``retry_base``, capped, with a little jitter so items
    that failed together do not retry together."""
    delay = min(settings.retry_cap, settings.retry_base * (1 << min(max(0, attempt - 1), 32)))
    return delay * random.uniform(1.0, 1.1)


def gives_up(claimed: ClaimedItem, settings: PipelineSettings) -> bool:
    """This attempt is the last: an alert item's ``max_attempts``-th, a
    delivery's first claimed once it is ``webhook_retry_horizon`` old
    (by its claim's time, so the delivery's record and the item agree
    however long the attempt took)."""
    event = claimed.event
    if isinstance(event, WebhookEvent):
        claimed_at = claimed.lease.until - settings.lease
        return claimed_at >= event.created_at + settings.webhook_retry_horizon
    return claimed.attempts >= settings.max_attempts


def retry_due(claimed: ClaimedItem, now: datetime, settings: PipelineSettings) -> datetime:
    due = now + retry_delay(claimed.attempts, settings)
    event = claimed.event
    if isinstance(event, WebhookEvent):
        # The last attempt falls on the horizon, not up to retry_cap past it.
        due = max(now, min(due, event.created_at + settings.webhook_retry_horizon))
    return due
