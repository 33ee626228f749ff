"""The order entries' races, set up in the table and run one step at a time
(docs/design.md, Webhook order): what a later delivery does when the head
settles while it looks, when the head's entry is stale, when it lost its
lease; and whom settling a head wakes."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest

from domain.datetimes import format_datetime
from services.pipeline import PipelineSettings
from services.pipeline.events import WebhookEvent
from services.pipeline.outbox.items import (
    ClaimedItem,
    Lease,
    claim_update,
    complete_delete,
    outbox_key,
    outbox_put,
    release_update,
)
from services.pipeline.webhooks.order import WebhookOrder, pending_delete, pending_put
from storage import Delete, Item, Page, Storage
from storage.access_patterns import WEBHOOK_PENDING
from storage.registry import AccessPattern
from tests.services.pipeline._support import queued

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
HOOK = "wh_B1_w1"


@pytest.fixture
def storage(store: Storage) -> Storage:
    return store


def delivery(n: int) -> WebhookEvent:
    return WebhookEvent(f"whd_{n}", HOOK, "B1", f"thr_{n}", NOW - timedelta(minutes=10 - n))


async def enqueue(storage: Storage, settings: PipelineSettings, *events: WebhookEvent) -> None:
    for event in events:
        put = outbox_put(event, now=event.created_at, settings=settings)
        await storage.transact_write([put, pending_put(event)])


async def item_of(storage: Storage, settings: PipelineSettings, event: WebhookEvent) -> Item:
    (item,) = [i for i in await queued(storage, settings) if i["id"] == event.event_id]
    return item


async def claim(
    storage: Storage, settings: PipelineSettings, event: WebhookEvent, token: str
) -> ClaimedItem:
    item = await item_of(storage, settings, event)
    lease = Lease("relay", token, NOW + settings.lease)
    await storage.transact_write([claim_update(item, lease)])
    return ClaimedItem.from_item(item, lease)


class Interposed:
    """The store, running ``then`` once right after the first read of the
    order entries: another relay's step between this one's read and write."""

    def __init__(self, inner: Storage, then: Any) -> None:
        self.inner = inner
        self.then = then

    async def query(self, ap: AccessPattern, params: Mapping[str, Any], **options: Any) -> Page:
        page = await self.inner.query(ap, params, **options)
        if ap is WEBHOOK_PENDING and self.then is not None:
            then, self.then = self.then, None
            await then()
        return page

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def order(
    storage: Storage | Interposed, settings: PipelineSettings, woke: list[int]
) -> WebhookOrder:
    return WebhookOrder(cast(Storage, storage), settings, lambda: NOW, lambda: woke.append(1))


async def test_the_oldest_goes_and_a_later_one_is_given_back_unleased(
    storage: Storage, settings: PipelineSettings
) -> None:
    first, second = delivery(1), delivery(2)
    await enqueue(storage, settings, second, first)
    woke: list[int] = []
    entries = order(storage, settings, woke)
    assert not await entries.waits(await claim(storage, settings, first, "t1"), first)
    assert await entries.waits(await claim(storage, settings, second, "t2"), second)
    waiting = await item_of(storage, settings, second)
    assert (waiting["status"], waiting["attempts"], waiting.get("leaseToken")) == ("READY", 0, None)
    assert waiting["dueAt"] == format_datetime(NOW + settings.retry_cap)
    held = await item_of(storage, settings, first)
    assert (held["status"], held["leaseToken"]) == ("LEASED", "t1")


async def test_a_head_settling_while_a_later_one_looks_lets_it_go(
    storage: Storage, settings: PipelineSettings
) -> None:
    first, second = delivery(1), delivery(2)
    await enqueue(storage, settings, first, second)
    await claim(storage, settings, first, "t1")
    claimed = await claim(storage, settings, second, "t2")

    async def settle_first() -> None:
        await storage.transact_write([complete_delete(first.event_id, "t1"), pending_delete(first)])

    # The control, the same steps without the settling, is the next test.
    assert not await order(Interposed(storage, settle_first), settings, []).waits(claimed, second)
    still = await item_of(storage, settings, second)
    assert (still["status"], still["leaseToken"]) == ("LEASED", "t2")


async def test_a_later_delivery_waits_when_the_head_is_unsettled(
    storage: Storage, settings: PipelineSettings
) -> None:
    """The control of the test above: the same steps without the settling."""
    first, second = delivery(1), delivery(2)
    await enqueue(storage, settings, first, second)
    await claim(storage, settings, first, "t1")
    claimed = await claim(storage, settings, second, "t2")
    assert await order(Interposed(storage, None), settings, []).waits(claimed, second)


async def test_an_entry_whose_item_is_gone_is_dropped_and_holds_nothing(
    storage: Storage, settings: PipelineSettings
) -> None:
    first, second = delivery(1), delivery(2)
    await enqueue(storage, settings, first, second)
    await storage.transact_write([Delete(outbox_key(first.event_id))])
    claimed = await claim(storage, settings, second, "t2")
    assert not await order(storage, settings, []).waits(claimed, second)
    page = await storage.query(WEBHOOK_PENDING, {"webhook": HOOK}, tenant="test")
    assert [entry["deliveryId"] for entry in page.items] == [second.delivery_id]


async def test_a_delivery_that_lost_its_lease_changes_nothing(
    storage: Storage, settings: PipelineSettings
) -> None:
    first, second = delivery(1), delivery(2)
    await enqueue(storage, settings, first, second)
    stale = await claim(storage, settings, second, "t-old")
    await storage.transact_write([release_update(second.event_id, "t-old", due=NOW)])
    await claim(storage, settings, second, "t-new")
    assert await order(storage, settings, []).waits(stale, second)
    taken = await item_of(storage, settings, second)
    assert (taken["status"], taken["leaseToken"]) == ("LEASED", "t-new")


async def test_settling_the_head_wakes_the_next_if_it_waits_and_not_if_it_is_held(
    storage: Storage, settings: PipelineSettings
) -> None:
    first, second, third = delivery(1), delivery(2), delivery(3)
    await enqueue(storage, settings, first, second, third)
    woke: list[int] = []
    entries = order(storage, settings, woke)
    await claim(storage, settings, first, "t1")
    assert await entries.waits(await claim(storage, settings, second, "t2"), second)
    await storage.transact_write([complete_delete(first.event_id, "t1"), pending_delete(first)])
    await entries.settled(first)
    woken = await item_of(storage, settings, second)
    assert woken["dueAt"] < format_datetime(NOW) and woke == [1]
    # The next one held by a relay (it reads the entries itself): left alone.
    await claim(storage, settings, second, "t2b")
    await storage.transact_write([complete_delete(second.event_id, "t2b"), pending_delete(second)])
    await claim(storage, settings, third, "t3")
    before = await item_of(storage, settings, third)
    await entries.settled(second)
    assert await item_of(storage, settings, third) == before and woke == [1]
