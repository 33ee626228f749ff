"""Relay backpressure: the relay claims only what it has room to work, and
what it leaves is counted and found again in the table (docs/design.md,
"Relay backpressure")."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import datetime, timedelta
from typing import Any, cast

import pytest

from domain.errors import ServiceUnavailable
from domain.identifiers import new_id
from services.pipeline import Pipeline, PipelineSettings, RecallEvent
from services.pipeline.alerts import writer as writer_module
from services.pipeline.outbox import claims as claims_module
from services.pipeline.outbox.intake import HINTS_PER_BATCH, Intake
from storage import CursorCodec, Put, Storage, Update
from storage.access_patterns import OUTBOX_DUE
from tests.services.pipeline._support import CURSOR_KEY, eventually, new_brand, queued, utcnow


async def leased(storage: Storage, settings: PipelineSettings) -> int:
    return sum(1 for item in await queued(storage, settings) if item["status"] == "LEASED")


async def test_a_burst_of_commits_leases_no_more_than_one_batch(
    storage: Storage, settings: PipelineSettings, t0: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """40 items committed while the lane is stuck: 5 leased (the batch), 20
    hinted, 15 dropped and counted; every one is worked once the lane moves."""
    small = dataclasses.replace(settings, claim_batch=5)
    gate = asyncio.Event()
    worked: list[str] = []

    async def slow(storage: Storage, event: Any, threats: Any, **_: Any) -> list[Any]:
        await gate.wait()
        worked.append(event.event_id)
        return []

    monkeypatch.setattr(writer_module, "alert_drafts", slow)
    pipeline = Pipeline(storage, small, cursors=CursorCodec(CURSOR_KEY), clock=utcnow)
    brand = await new_brand(storage)
    events = [RecallEvent(new_id(), brand, t0, None) for _ in range(40)]
    await pipeline.start()
    try:
        committing = pipeline.committing(storage)
        for event in events:
            await committing.transact_write(pipeline.enqueue(event))

        async def one_batch() -> bool:
            return await leased(storage, small) == 5

        await eventually(one_batch)
        await asyncio.sleep(5 * small.poll_interval.total_seconds())
        assert await leased(storage, small) == 5, "nothing more is leased while the lane is full"
        hinted = HINTS_PER_BATCH * small.claim_batch
        # A poll may claim an item before its hint is taken; that hint then
        # holds a place in the queue, and one more is dropped.
        assert 40 - 5 - hinted <= pipeline.relay.deferred <= 40 - hinted

        gate.set()

        async def drained() -> bool:
            return not await queued(storage, small)

        await eventually(drained, timeout=10)
    finally:
        await pipeline.stop()
    assert sorted(worked) == sorted(event.event_id for event in events)
    assert pipeline.relay.lapsed == 0


async def test_an_item_whose_lease_ran_out_in_the_lane_is_not_worked_there(
    storage: Storage, settings: PipelineSettings, t0: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first item outlasts the lease; the second, queued behind it, is
    counted as lapsed and skipped, then claimed again and worked once."""
    short = dataclasses.replace(settings, claim_batch=2, lease=timedelta(milliseconds=300))
    worked: list[str] = []

    async def slow_first(storage: Storage, event: Any, threats: Any, **_: Any) -> list[Any]:
        if not worked:
            await asyncio.sleep(0.6)
        worked.append(event.event_id)
        return []

    monkeypatch.setattr(writer_module, "alert_drafts", slow_first)
    pipeline = Pipeline(storage, short, cursors=CursorCodec(CURSOR_KEY), clock=utcnow)
    brand = await new_brand(storage)
    events = [RecallEvent(new_id(), brand, t0, None) for _ in range(2)]
    for event in events:
        await storage.transact_write(pipeline.enqueue(event))
    await pipeline.start()
    try:

        async def done() -> bool:
            return not await queued(storage, short) and len(worked) >= 2

        await eventually(done)
    finally:
        await pipeline.stop()
    assert pipeline.relay.lapsed >= 1
    assert set(worked) == {event.event_id for event in events}


def test_the_lanes_room_follows_its_pace(settings: PipelineSettings) -> None:
    """A lease of 30 s and items taking 2 s: 7 claimed at once (7 x 2 s is
    within half the lease), not the batch of 25; back to 25 when fast."""
    paced = dataclasses.replace(settings, lease=timedelta(seconds=30), claim_batch=25)
    intake = Intake(paced)
    for _ in range(40):
        intake.worked(2.0)
    for _ in range(7):
        assert intake.fits({"kind": "SCAN"})
        intake.take(webhook=False)
    assert not intake.fits({"kind": "SCAN"})
    assert intake.fits({"kind": "WEBHOOK"}), "deliveries have their own room"
    for _ in range(60):
        intake.worked(0.01)
    assert intake.pop_ready() is None, "no hints"
    for _ in range(25 - 7):
        assert intake.fits({"kind": "SCAN"})
        intake.take(webhook=False)
    assert not intake.fits({"kind": "SCAN"})


def test_hints_are_claimed_oldest_first_within_the_room_of_their_kind(
    settings: PipelineSettings,
) -> None:
    paced = dataclasses.replace(settings, claim_batch=1, webhook_concurrency=1)
    intake = Intake(paced)
    scans = [{"kind": "SCAN", "id": f"s{i}"} for i in range(2)]
    hook = {"kind": "WEBHOOK", "id": "w"}
    for item in (scans[0], hook, scans[1]):
        intake.offer(item)
    assert intake.pop_ready() is scans[0]
    assert intake.pop_ready() is hook, "the alert room is taken; the delivery still fits"
    assert intake.pop_ready() is None, "both rooms taken"
    assert intake.waiting == 1
    intake.done(webhook=True)
    assert intake.pop_ready() is None, "the room freed is a delivery's"
    intake.done(webhook=False)
    assert intake.pop_ready() is scans[1]
    assert intake.waiting == 0


async def test_an_item_is_claimed_once_whether_a_poll_or_its_hint_finds_it(
    storage: Storage, settings: PipelineSettings, t0: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Items committed while polls run every few milliseconds are each claimed
    once: a poll that claims an item drops its hint, and the hint loop skips
    an item a poll holds, rather than make a claim that could only lose
    (docs/design.md, Verify path)."""
    eager = dataclasses.replace(settings, poll_interval=timedelta(milliseconds=1))
    claims: list[str] = []
    worked: list[str] = []
    claim_update = claims_module.claim_update

    def counted(item: Any, lease: Any) -> Any:
        claims.append(item["id"])
        return claim_update(item, lease)

    async def slow(storage: Storage, event: Any, threats: Any, **_: Any) -> list[Any]:
        await asyncio.sleep(0.002)
        worked.append(event.event_id)
        return []

    monkeypatch.setattr(claims_module, "claim_update", counted)
    monkeypatch.setattr(writer_module, "alert_drafts", slow)
    pipeline = Pipeline(storage, eager, cursors=CursorCodec(CURSOR_KEY), clock=utcnow)
    brand = await new_brand(storage)
    events = [RecallEvent(new_id(), brand, t0, None) for _ in range(60)]
    await pipeline.start()
    try:
        committing = pipeline.committing(storage)
        for event in events:
            await committing.transact_write(pipeline.enqueue(event))

        async def drained() -> bool:
            return not await queued(storage, eager)

        await eventually(drained, timeout=10)
    finally:
        await pipeline.stop()
    assert sorted(worked) == sorted(event.event_id for event in events)
    # Items born claimed (the lane had room at their commit) take no claim.
    assert len(claims) == len(set(claims)), "no claim that could only lose"


class _HeldClaims:
    """A store whose claim writes wait until ``release`` is set; ``waiting``
    counts the claims waiting at once."""

    def __init__(self, inner: Storage) -> None:
        self.inner = inner
        self.backend = inner.backend
        self.waiting = 0
        self.release = asyncio.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def transact_write(self, actions: Any) -> None:
        if any(isinstance(a, Update) and "leaseToken" in a.set for a in actions):
            self.waiting += 1
            await self.release.wait()
        await self.inner.transact_write(actions)


async def test_hinted_items_are_claimed_side_by_side(
    storage: Storage, settings: PipelineSettings, t0: datetime
) -> None:
    """Four hints with room for them: four claims wait for their commits at
    once. One after another, the hints drained no faster than one commit at
    a time, slower than a busy process commits scans
    (docs/design.md, Verify path)."""
    quiet = dataclasses.replace(
        settings, poll_interval=timedelta(seconds=60), idle_poll_interval=timedelta(seconds=60)
    )
    held = _HeldClaims(storage)
    pipeline = Pipeline(cast(Storage, held), quiet, cursors=CursorCodec(CURSOR_KEY), clock=utcnow)
    brand = await new_brand(storage)
    events = [RecallEvent(new_id(), brand, t0, None) for _ in range(4)]
    await pipeline.start()
    try:
        for event in events:
            [put] = pipeline.enqueue(event)
            await storage.transact_write([put])
            assert isinstance(put, Put)
            pipeline.relay.expect(put.item)

        async def all_waiting() -> bool:
            return held.waiting == len(events)

        await eventually(all_waiting)
        held.release.set()

        async def drained() -> bool:
            return not await queued(storage, quiet)

        await eventually(drained)
    finally:
        held.release.set()
        await pipeline.stop()


class _Counting:
    """The store, recording the claims of each transaction and the page
    size of each read of the due queue."""

    def __init__(self, inner: Storage) -> None:
        self.inner = inner
        self.backend = inner.backend
        self.claims: list[int] = []
        self.firsts: list[int] = []
        """The page size each poll's read of a shard asked for."""
        self.polls = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def query(self, ap: Any, params: Any, **options: Any) -> Any:
        if ap is OUTBOX_DUE:
            self.firsts.append(options["first"])
            self.polls += params["shard"] == 0
        return await self.inner.query(ap, params, **options)

    async def transact_write(self, actions: Any) -> None:
        claims = sum(1 for a in actions if isinstance(a, Update) and "leaseToken" in a.set)
        if claims:
            self.claims.append(claims)
        await self.inner.transact_write(actions)


_QUIET = {"poll_interval": timedelta(seconds=60), "idle_poll_interval": timedelta(seconds=60)}
"""No poll but the first, at start, unless the relay asks for one."""


async def test_hints_waiting_together_are_claimed_in_one_transaction(
    storage: Storage, settings: PipelineSettings, t0: datetime
) -> None:
    quiet = dataclasses.replace(settings, **_QUIET)  # type: ignore[arg-type]
    counting = _Counting(storage)
    pipeline = Pipeline(
        cast(Storage, counting), quiet, cursors=CursorCodec(CURSOR_KEY), clock=utcnow
    )
    brand = await new_brand(storage)
    events = [RecallEvent(new_id(), brand, t0, None) for _ in range(4)]
    await pipeline.start()
    try:

        async def polled() -> bool:
            return len(counting.firsts) >= len(quiet.shards)

        await eventually(polled)  # the poll at start found nothing
        puts = [put for event in events for put in pipeline.enqueue(event)]
        await storage.transact_write(puts)
        for put in puts:
            assert isinstance(put, Put)
            pipeline.relay.expect(put.item)

        async def drained() -> bool:
            return not await queued(storage, quiet)

        await eventually(drained)
    finally:
        await pipeline.stop()
    assert counting.claims == [4]


async def test_a_backlog_larger_than_the_room_drains_without_waiting_for_the_interval(
    storage: Storage, settings: PipelineSettings, t0: datetime
) -> None:
    """Items nobody hinted, three times the room: the poll at start claims a
    batch and, finding as many as it had room for, polls again once half the
    room is free, not a minute later; each poll claims in one transaction."""
    small = dataclasses.replace(settings, claim_batch=5, webhook_concurrency=1, **_QUIET)  # type: ignore[arg-type]
    counting = _Counting(storage)
    pipeline = Pipeline(
        cast(Storage, counting), small, cursors=CursorCodec(CURSOR_KEY), clock=utcnow
    )
    brand = await new_brand(storage)
    events = [RecallEvent(new_id(), brand, t0, None) for _ in range(15)]
    for event in events:
        await storage.transact_write(pipeline.enqueue(event))
    await pipeline.start()
    try:

        async def drained() -> bool:
            return not await queued(storage, small)

        await eventually(drained)
    finally:
        await pipeline.stop()
    assert sum(counting.claims) == 15
    assert max(counting.claims) > 1, "claimed a batch at a time"
    assert len(counting.claims) <= counting.polls, "one claim transaction a poll"


async def test_a_poll_reads_no_more_than_it_has_room_for(
    storage: Storage, settings: PipelineSettings, t0: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three of five places taken by items the lane holds: a poll asks each
    shard for the three items it has room for (two alerts, one delivery),
    not the batch of five, which it would mostly skip."""
    small = dataclasses.replace(settings, claim_batch=5, webhook_concurrency=1, **_QUIET)  # type: ignore[arg-type]
    gate = asyncio.Event()

    async def stuck(storage: Storage, event: Any, threats: Any, **_: Any) -> list[Any]:
        await gate.wait()
        return []

    monkeypatch.setattr(writer_module, "alert_drafts", stuck)
    counting = _Counting(storage)
    pipeline = Pipeline(
        cast(Storage, counting), small, cursors=CursorCodec(CURSOR_KEY), clock=utcnow
    )
    brand = await new_brand(storage)
    await pipeline.start()
    try:

        async def polled() -> bool:
            return len(counting.firsts) >= len(small.shards)

        await eventually(polled)  # the poll at start found nothing
        committing = pipeline.committing(storage)
        for _ in range(3):
            await committing.transact_write(
                pipeline.enqueue(RecallEvent(new_id(), brand, t0, None))
            )
        counting.firsts.clear()
        assert await pipeline.relay.poll_once() == 0
        assert counting.firsts == [3] * len(small.shards)
    finally:
        gate.set()
        await pipeline.stop()


class _FailingRead:
    """The store, failing the first read of the due queue that follows one
    which found items."""

    def __init__(self, inner: Storage) -> None:
        self.inner = inner
        self.backend = inner.backend
        self.found = False
        self.failed = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def query(self, ap: Any, params: Any, **options: Any) -> Any:
        if ap is OUTBOX_DUE and self.found and not self.failed:
            self.failed = True
            raise ServiceUnavailable("the store is down")
        page = await self.inner.query(ap, params, **options)
        self.found = self.found or (ap is OUTBOX_DUE and bool(page.items))
        return page


async def test_a_poll_whose_read_fails_gives_back_the_room_it_took(
    storage: Storage, settings: PipelineSettings, t0: datetime
) -> None:
    """A shard's read fails after another's items took their room: the next
    poll has the whole room again (25 alert items of the 30 due)."""
    quiet = dataclasses.replace(settings, **_QUIET)  # type: ignore[arg-type]
    failing = _FailingRead(storage)
    pipeline = Pipeline(
        cast(Storage, failing), quiet, cursors=CursorCodec(CURSOR_KEY), clock=utcnow
    )
    brand = await new_brand(storage)
    for _ in range(30):
        await storage.transact_write(pipeline.enqueue(RecallEvent(new_id(), brand, t0, None)))
    with pytest.raises(ServiceUnavailable):
        await pipeline.relay.poll_once()
    assert await pipeline.relay.poll_once() == quiet.claim_batch
