"""Transactions that survive contention.

DynamoDB cancels a transaction that races another on the same item (a brand's
counters are touched by every registration), and the cancellation is safe to
retry: nothing was written. A failed *condition* is an answer, not contention,
so it is never retried here; callers map it to the error it means.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from domain.errors import ServiceUnavailable, TransactionCanceled
from storage import Storage, WriteAction
from storage.store import backoff_delay

__all__ = ["TRANSACT_MAX_ATTEMPTS", "transact"]

TRANSACT_MAX_ATTEMPTS = 6


async def transact(storage: Storage, actions: Sequence[WriteAction]) -> None:
    for attempt in range(TRANSACT_MAX_ATTEMPTS):
        if attempt:
            await asyncio.sleep(backoff_delay(attempt))
        try:
            await storage.transact_write(actions)
        except TransactionCanceled:
            continue
        return
    raise ServiceUnavailable(
        "The write kept colliding with concurrent writes",
        hint="Retry the request; it was not applied.",
    )
