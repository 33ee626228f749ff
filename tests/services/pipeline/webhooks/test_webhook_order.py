"""A receiver down for ten minutes gets every alert afterwards, once, in
order, while the brand's other webhook keeps receiving (docs/design.md,
Webhook order). The relay runs on an injected clock: ten minutes pass in a
few real seconds. The clock starts eleven minutes behind the real one, so
the deliveries sent after the outage carry timestamps the official verifier,
which reads the real clock, accepts."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

import pytest

from domain.errors import ConditionFailed
from domain.identifiers import new_id
from services.pipeline import Pipeline, PipelineSettings, RecallEvent
from services.pipeline.outbox.items import Lease, claim_update, complete_delete
from services.pipeline.webhooks.order import WebhookOrder
from services.webhooks.items import DeliveryStatus
from storage import CursorCodec, Item, Storage
from storage.access_patterns import WEBHOOK_PENDING
from tests._support.receiver import Receiver, Request
from tests._support.standard_webhooks import Delivery, python_verifies
from tests.services.pipeline._support import CURSOR_KEY, eventually, new_brand, queued, utcnow

from .test_delivery import deliveries, webhook

ALERTS = 8
OUTAGE = timedelta(minutes=10)
STEP = timedelta(seconds=5)
"""How far the clock moves per turn of the relay's loop (20 ms real)."""
WAIT_SECONDS = 30.0
"""How long each wait for the relay may take, in real time. An alert's
deliveries are a few round trips to the store (well under a second here),
but a suite worker holding moto's tables (in-process, gigabytes by the end)
stops for full collections of 1-3 s each, measured: the default five
seconds ran out in a full CACHED_SUITE=1 run, where the table channel's
writes add to those tables, and in one of two runs with such collections
forced. The test is about order and once-only delivery, not latency."""


@dataclass
class Clock:
    now: datetime

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def storage(store: Storage) -> Storage:
    return store


@pytest.fixture
def slow_settings(settings: PipelineSettings) -> PipelineSettings:
    """Production's backoff shape, its cap shortened to a minute so the head's
    next attempt after the outage is within the verifier's five minutes; the
    lease longer than a clock step, so no delivery loses its lease here."""
    return replace(
        settings,
        retry_base=timedelta(seconds=1),
        retry_cap=timedelta(minutes=1),
        lease=timedelta(minutes=10),
        webhook_retry_horizon=timedelta(hours=24),
    )


@pytest.fixture
async def clocked(
    storage: Storage, slow_settings: PipelineSettings
) -> AsyncIterator[tuple[Pipeline, Clock]]:
    clock = Clock(utcnow() - OUTAGE - timedelta(minutes=1))
    pipeline = Pipeline(storage, slow_settings, cursors=CursorCodec(CURSOR_KEY), clock=clock)
    await pipeline.start()
    yield pipeline, clock
    await pipeline.stop()


async def tick(clock: Clock, step: timedelta = STEP) -> None:
    clock.now += step
    await asyncio.sleep(0.02)


def arrived(receiver: Receiver) -> list[Request]:
    return receiver.delivered()


def alert_ids(requests: list[Request]) -> list[str]:
    return [json.loads(r.body)["alert"]["id"] for r in requests]


def in_order(received: list[str], raised: list[str]) -> None:
    assert received == raised, "deliveries out of alert order"


async def raise_alert(pipeline: Pipeline, storage: Storage, brand: str, now: datetime) -> None:
    await pipeline.committing(storage).transact_write(
        pipeline.enqueue(RecallEvent(new_id(), brand, now, None))
    )


async def pending(storage: Storage, hook: str) -> list[Item]:
    page = await storage.query(WEBHOOK_PENDING, {"webhook": hook}, tenant="test", first=100)
    return page.items


def settled(storage: Storage, hook: str) -> Callable[[], Awaitable[bool]]:
    """No entry left: every delivery of ``hook`` settled."""

    async def check() -> bool:
        return await pending(storage, hook) == []

    return check


def records_of(records: list[Item], hook: str) -> list[Item]:
    return sorted((r for r in records if r["webhookId"] == hook), key=lambda r: r["createdAt"])


@pytest.mark.parametrize("ordered", [True, False], ids=["ordered", "planted-unordered"])
async def test_after_a_ten_minute_outage_every_alert_arrives_once_in_order(
    storage: Storage,
    clocked: tuple[Pipeline, Clock],
    slow_settings: PipelineSettings,
    monkeypatch: pytest.MonkeyPatch,
    ordered: bool,
) -> None:
    pipeline, clock = clocked
    random.seed(36)  # the backoff's jitter
    if not ordered:
        # The order switched off: no delivery waits, and none is woken (the
        # wakes alone, in entry order, drain a backlog in order once its
        # head is through). Each delivery then goes at its own backoff's
        # due time: the eight arrive in the order of those jittered times.
        async def nothing(self: WebhookOrder, event: object) -> None:
            return None

        monkeypatch.setattr(WebhookOrder, "ahead", nothing)
        monkeypatch.setattr(WebhookOrder, "settled", nothing)
    brand = await new_brand(storage)
    ok = lambda request, attempt: 200  # noqa: E731
    async with Receiver(ok) as down, Receiver(ok) as up:
        down_hook, secret = await webhook(storage, brand, down.url)
        up_hook, _ = await webhook(storage, brand, up.url)
        await down.stop()
        outage_ends = clock.now + OUTAGE
        for n in range(1, ALERTS + 1):
            await raise_alert(pipeline, storage, brand, clock.now)

            async def up_has(n: int = n) -> bool:
                await tick(clock, timedelta(0))
                return len(arrived(up)) == n

            # The brand's other webhook receives each alert during the outage.
            await eventually(up_has, timeout=WAIT_SECONDS)
            for _ in range(int(OUTAGE / ALERTS / STEP)):
                await tick(clock)
        assert clock.now >= outage_ends
        assert down.requests == []
        head = records_of(await deliveries(storage, brand), down_hook)[0]
        # Retried all along, far past the attempts an alert item gets.
        assert head["attempts"] > slow_settings.max_attempts
        assert head["status"] == DeliveryStatus.RETRYING.value

        await down.start()

        async def drained() -> bool:
            if ordered and arrived(down):
                # The clock stops once the head is through: what follows it
                # is woken by each settling delivery, not by time passing.
                await asyncio.sleep(0.02)
            else:
                await tick(clock, timedelta(seconds=1))
            return len({r.headers["webhook-id"] for r in arrived(down)}) == ALERTS

        await eventually(drained, timeout=WAIT_SECONDS)
        # The receiver has each delivery before the relay settles it.
        await eventually(settled(storage, down_hook), timeout=WAIT_SECONDS)
        await eventually(settled(storage, up_hook), timeout=WAIT_SECONDS)
        up_ids = alert_ids(arrived(up))

    records = await deliveries(storage, brand)
    raised = [r["alertId"] for r in records_of(records, down_hook)]
    assert raised == [r["alertId"] for r in records_of(records, up_hook)] == up_ids
    received = arrived(down)
    ids = [r.headers["webhook-id"] for r in received]
    # Exactly once by webhook-id: every delivery, none twice.
    assert sorted(ids) == sorted(r["id"] for r in records_of(records, down_hook))
    assert len(set(ids)) == ALERTS
    assert all(python_verifies(Delivery(secret, r.headers, r.body)) is None for r in received)
    assert {r["status"] for r in records} == {DeliveryStatus.DELIVERED.value}
    first_arrivals = list(dict.fromkeys(alert_ids(received)))
    if ordered:
        in_order(first_arrivals, raised)
        assert len(received) == ALERTS
    else:
        with pytest.raises(AssertionError, match="out of alert order"):
            in_order(first_arrivals, raised)


async def test_a_delivery_whose_holder_died_mid_attempt_holds_the_later_ones_until_retried(
    storage: Storage,
    clocked: tuple[Pipeline, Clock],
    slow_settings: PipelineSettings,
) -> None:
    """The head's lease taken by a process that died while sending: the
    deliveries behind it wait out the lease (claimed, and given back), then
    the head goes first, and the dead holder's late settling changes nothing."""
    first, clock = clocked
    brand = await new_brand(storage)
    async with Receiver(lambda request, attempt: 200) as receiver:
        hook, secret = await webhook(storage, brand, receiver.url)
        await receiver.stop()
        for _ in range(3):
            await raise_alert(first, storage, brand, clock.now)
            await tick(clock)

        async def all_queued() -> bool:
            await tick(clock, timedelta(0))
            return len(records_of(await deliveries(storage, brand), hook)) == 3

        await eventually(all_queued, timeout=WAIT_SECONDS)
        await tick(clock, timedelta(minutes=2))
        await first.stop()
        head, *rest = records_of(await deliveries(storage, brand), hook)
        (item,) = [i for i in await queued(storage, slow_settings) if i["id"].endswith(head["id"])]
        dead = Lease("dead-process", "dead-token", clock.now + slow_settings.lease)
        await storage.transact_write([claim_update(item, dead)])
        await receiver.start()
        second = Pipeline(storage, slow_settings, cursors=CursorCodec(CURSOR_KEY), clock=clock)
        await second.start()
        try:
            while clock.now + timedelta(seconds=20) < dead.until:
                await tick(clock, timedelta(seconds=20))
            # Ten minutes in which the later deliveries were due (every
            # retry_cap) and waited, unsent and with no attempt counted.
            assert receiver.requests == []
            waited = records_of(await deliveries(storage, brand), hook)[1:]
            assert [(r["status"], r["attempts"]) for r in waited] == [("PENDING", 0)] * 2

            async def delivered() -> bool:
                await tick(clock, timedelta(seconds=1))
                return len(receiver.delivered()) >= 3

            await eventually(delivered, timeout=WAIT_SECONDS)
            # The receiver has each delivery before the relay settles it.
            await eventually(settled(storage, hook), timeout=WAIT_SECONDS)
        finally:
            await second.stop()
    got = [r.headers["webhook-id"] for r in receiver.delivered()]
    assert got == [r["id"] for r in (head, *rest)]
    assert all(
        python_verifies(Delivery(secret, r.headers, r.body)) is None for r in receiver.requests
    )
    # The dead holder's settling, late, finds the item gone.
    with pytest.raises(ConditionFailed):
        await storage.transact_write([complete_delete(item["id"], dead.token)])
