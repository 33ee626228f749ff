"""Worked items waiting together are deleted in one transaction each batch,
on both backends; one taken over by another relay is left to it and the
rest of its batch still deleted."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import timedelta

from services.pipeline import PipelineSettings
from services.pipeline.events import ScanEvent
from services.pipeline.outbox.completions import COMPLETIONS_MAX, Completions
from services.pipeline.outbox.items import (
    ClaimedItem,
    Lease,
    born_put,
    outbox_put,
    release_update,
)
from storage import Storage
from storage.access_patterns import OUTBOX_DUE
from storage.sqlite import open_sqlite
from tests.services.pipeline._support import CURSOR_KEY, FAR_FUTURE, Counting, Product, utcnow

SETTINGS = PipelineSettings()


async def born(storage: Storage, count: int) -> list[ClaimedItem]:
    """``count`` scan items, each born claimed under a lease of its own."""
    product, now = Product("brand_1", utcnow()), utcnow()
    claimed = []
    for index in range(count):
        event: ScanEvent = product.scan(now + timedelta(microseconds=index))[1]
        lease = Lease("relay_a", f"token_{index}", now + timedelta(minutes=5))
        put = born_put(outbox_put(event, now=now, settings=SETTINGS), lease)
        await storage.transact_write([put])
        claimed.append(ClaimedItem(event, lease, 1, int(put.item["shard"])))
    return claimed


async def stored(storage: Storage, claimed: list[ClaimedItem]) -> list[str]:
    found = []
    for shard in SETTINGS.shards:
        page = await storage.query(
            OUTBOX_DUE, {"shard": shard, "before": FAR_FUTURE}, tenant="test", first=100
        )
        found += [item["id"] for item in page.items]
    return sorted(set(found) & {c.event_id for c in claimed})


async def settle(storage: Counting, claimed: list[ClaimedItem]) -> list[str]:
    """Hands every item over at once, as a lane that worked them while a
    delete was being written; the ids settled, in order."""
    settled: list[str] = []
    done = asyncio.Event()

    def record(item: ClaimedItem) -> None:
        settled.append(item.event_id)
        if len(settled) == len(claimed):
            done.set()

    completions = Completions(storage, record)  # type: ignore[arg-type]
    for item in claimed:
        completions.add(item)
    runner = asyncio.create_task(completions.run())
    try:
        await asyncio.wait_for(done.wait(), 10)
    finally:
        runner.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await runner
    return settled


async def test_items_waiting_together_are_deleted_in_one_transaction(store: Storage) -> None:
    claimed = await born(store, 5)
    counting = Counting(store)
    assert await settle(counting, claimed) == [c.event_id for c in claimed]
    assert counting.transactions == [5]
    assert await stored(store, claimed) == []


async def test_an_item_taken_over_is_left_and_the_rest_deleted(store: Storage) -> None:
    claimed = await born(store, 4)
    taken = claimed[2]
    # Its lease lapsed and another relay holds it now: the token differs.
    await store.transact_write(
        [release_update(taken.event_id, taken.lease.token, due=utcnow() - timedelta(seconds=1))]
    )
    counting = Counting(store)
    assert sorted(await settle(counting, claimed)) == sorted(c.event_id for c in claimed)
    assert counting.transactions == [4, 3]
    assert await stored(store, claimed) == [taken.event_id]


async def test_a_batch_is_at_most_one_transaction_with_one_delete_per_item() -> None:
    storage = await open_sqlite(":memory:", cursor_key=CURSOR_KEY)
    try:
        claimed = await born(storage, COMPLETIONS_MAX + 1)
        again = claimed[0]  # claimed again after its lease lapsed, say
        counting = Counting(storage)
        handed = [claimed[0], again, *claimed[1:]]
        assert len(await settle(counting, handed)) == COMPLETIONS_MAX + 2
        assert counting.transactions == [COMPLETIONS_MAX, 2, 1]
        assert await stored(storage, claimed) == []
    finally:
        await storage.close()
