"""Worked outbox items deleted together, as many per transaction as have
waited (docs/design.md, "Verify path").

The lane works one item at a time and used to delete each in a storage call
of its own: a transaction, a future and a task per item, on the event loop's
thread. Deletes that wait while one is being written now go in the next
transaction, up to ``COMPLETIONS_MAX`` (the store's 100 actions, less the
margin nothing needs). Each delete keeps its lease condition, and a
transaction applies whole or not at all, so one item taken over by another
relay (its condition fails) is dropped from the batch and the rest are
written again; nothing is deleted that this relay no longer holds.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from storage import Storage
from storage.limits import TRANSACT_MAX_ITEMS

from .conditional import UnnamedLoss, write_holding
from .items import ClaimedItem, complete_delete

__all__ = ["COMPLETIONS_MAX", "Completions"]

logger = logging.getLogger("proofgate.pipeline")

COMPLETIONS_MAX = TRANSACT_MAX_ITEMS
"""A transaction's actions at most (docs/design.md, Storage)."""


class Completions:
    """Deletes the items handed to ``add``; ``settled`` is called for each
    once its delete committed, was refused, or failed (then its lease
    expires and another attempt follows, as before)."""

    def __init__(self, storage: Storage, settled: Callable[[ClaimedItem], None]) -> None:
        self._storage = storage
        self._settled = settled
        self._waiting: list[ClaimedItem] = []
        self._arrived = asyncio.Event()

    def add(self, claimed: ClaimedItem) -> None:
        self._waiting.append(claimed)
        self._arrived.set()

    async def run(self) -> None:
        while True:
            await self._arrived.wait()
            self._arrived.clear()
            while self._waiting:
                # Cancelled (the relay stops): the batch stays held, and the
                # relay gives its leases back.
                batch = self._take()
                await self._delete(batch)
                for claimed in batch:
                    self._settled(claimed)

    def _take(self) -> list[ClaimedItem]:
        """The oldest waiting items, one per event: an item claimed again
        after its lease lapsed must not share a transaction with itself."""
        batch: dict[str, ClaimedItem] = {}
        rest: list[ClaimedItem] = []
        for claimed in self._waiting:
            if len(batch) < COMPLETIONS_MAX and claimed.event_id not in batch:
                batch[claimed.event_id] = claimed
            else:
                rest.append(claimed)
        self._waiting = rest
        return list(batch.values())

    async def _delete(self, batch: list[ClaimedItem]) -> None:
        taken_over: list[int] = []

        def lost(index: int) -> None:
            taken_over.append(index)
            logger.info("Outbox item %s was taken over before it completed", batch[index].event_id)

        actions = [complete_delete(c.event_id, c.lease.token) for c in batch]
        try:
            await write_holding(self._storage, actions, lost)
        except asyncio.CancelledError:
            raise
        except UnnamedLoss as unnamed:
            logger.warning("Deleting worked outbox items failed: %s", unnamed.failed.detail)
        except Exception:
            logger.exception(
                "Deleting %d worked outbox items failed; their leases will expire",
                len(batch) - len(taken_over),
            )
