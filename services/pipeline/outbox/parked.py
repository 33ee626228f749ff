"""Parked outbox items: what the relay gave up on, for an operator to see and retry.

Read through AP22 only; requeueing an item finds it in that list, so the
operator's command needs no other read.
"""

from __future__ import annotations

from datetime import datetime

from domain.errors import ConditionFailed, NotFound
from services.paging import query_all
from services.pipeline.live.tailer import PIPELINE_TENANT
from services.pipeline.outbox.items import requeue_update
from services.pipeline.settings import PipelineSettings
from storage import Item, Storage
from storage.access_patterns import OUTBOX_PARKED

__all__ = ["PARKED_LIST_MAX", "parked_items", "requeue_parked"]

PARKED_LIST_MAX = 10_000


async def parked_items(storage: Storage, *, limit: int = PARKED_LIST_MAX) -> list[Item]:
    """Oldest parked first."""
    return await query_all(storage, OUTBOX_PARKED, {}, tenant=PIPELINE_TENANT, limit=limit)


async def requeue_parked(
    storage: Storage, event_id: str, *, now: datetime, settings: PipelineSettings
) -> Item:
    """Puts a parked item back in the ready queue with fresh attempts."""
    for item in await parked_items(storage):
        if item["id"] == event_id:
            try:
                await storage.transact_write([requeue_update(item, now=now, settings=settings)])
            except ConditionFailed:
                raise NotFound(f"Outbox item {event_id} is no longer parked") from None
            return item
    raise NotFound(
        f"No parked outbox item {event_id}", hint="List them with: proofgate outbox --parked"
    )
