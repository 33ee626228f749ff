"""Outbox items a command commits in this process are born claimed by its
relay while the lane has room, and worked without a claim's write
(docs/design.md, Pipeline)."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import datetime, timedelta, timezone
from typing import Any, cast

import pytest

from domain.datetimes import parse_datetime
from domain.enums import ProductStatus, ScanResult
from domain.errors import ConditionFailed, ServiceUnavailable
from domain.identifiers import new_id
from domain.signing import KeyRing, SigningKey
from domain.threats import ClaimFacts, ProductFacts
from services.context import Services
from services.pipeline import Pipeline, PipelineSettings, RecallEvent, ScanEvent
from services.pipeline.alerts import writer as writer_module
from services.pipeline.committing import CommittingStorage, Handover
from services.pipeline.events import event_from_payload
from services.pipeline.outbox import claims as claims_module
from services.pipeline.outbox.items import Lease, born_put, due_sort, outbox_key
from services.pipeline.service import outbox_actions
from storage import CursorCodec, ItemExists, Put, Storage
from tests.services.pipeline._support import CURSOR_KEY, eventually, new_brand, queued, utcnow


class Gated:
    """The relay's rules, held until ``gate`` opens; what they worked, and
    every claim the relay wrote."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.gate = asyncio.Event()
        self.worked: list[str] = []
        self.claims: list[str] = []
        claim_update = claims_module.claim_update

        async def slow(storage: Storage, event: Any, threats: Any, **_: Any) -> list[Any]:
            await self.gate.wait()
            self.worked.append(event.event_id)
            return []

        def counted(item: Any, lease: Any) -> Any:
            self.claims.append(item["id"])
            return claim_update(item, lease)

        monkeypatch.setattr(writer_module, "alert_drafts", slow)
        monkeypatch.setattr(claims_module, "claim_update", counted)


async def _stored(storage: Storage, event: RecallEvent) -> dict[str, Any]:
    [item] = [i for i in await queued(storage, PipelineSettings()) if i["id"] == event.event_id]
    return item


_VIA = pytest.mark.parametrize("via", ["commit", "enqueue"])
"""Born claimed by the committing storage at the commit (``Pipeline.enqueue``'s
ready item copied) or built so by its ``enqueue``."""


@_VIA
async def test_an_item_committed_with_room_is_born_claimed_and_worked_without_a_claim(
    storage: Storage,
    settings: PipelineSettings,
    t0: datetime,
    monkeypatch: pytest.MonkeyPatch,
    via: str,
) -> None:
    """The first item fits the lane (one slot): written leased to this relay,
    first attempt, due when the lease ends, and worked with no claim. The
    second finds the lane full: written ready, and claimed (the control)."""
    gated = Gated(monkeypatch)
    one = dataclasses.replace(settings, claim_batch=1)
    pipeline = Pipeline(storage, one, cursors=CursorCodec(CURSOR_KEY), clock=utcnow)
    brand = await new_brand(storage)
    first, second = (RecallEvent(new_id(), brand, t0, None) for _ in range(2))
    await pipeline.start()
    try:
        committing = pipeline.committing(storage)
        enqueue = committing.enqueue if via == "enqueue" else pipeline.enqueue
        before = utcnow()
        await committing.transact_write(enqueue(first))
        await committing.transact_write(enqueue(second))
        born, ready = await _stored(storage, first), await _stored(storage, second)
        assert born["status"] == "LEASED"
        assert born["leaseOwner"] == pipeline.relay.owner
        assert born["attempts"] == 1
        assert born["GSI2SK"] == due_sort(parse_datetime(born["leaseUntil"]), first.event_id)
        assert parse_datetime(born["leaseUntil"]) >= before + one.lease
        assert ready["status"] == "READY"
        assert ready["attempts"] == 0
        gated.gate.set()

        async def drained() -> bool:
            return not await queued(storage, one)

        await eventually(drained)
    finally:
        await pipeline.stop()
    assert sorted(gated.worked) == sorted([first.event_id, second.event_id])
    assert gated.claims == [second.event_id]


@_VIA
async def test_a_transaction_that_fails_takes_no_room_and_writes_nothing(
    storage: Storage,
    settings: PipelineSettings,
    t0: datetime,
    monkeypatch: pytest.MonkeyPatch,
    via: str,
) -> None:
    """A command's write that fails its condition leaves no item; the next
    command's item is still born claimed in the lane's only slot."""
    gated = Gated(monkeypatch)
    gated.gate.set()
    one = dataclasses.replace(settings, claim_batch=1)
    pipeline = Pipeline(storage, one, cursors=CursorCodec(CURSOR_KEY), clock=utcnow)
    brand = await new_brand(storage)
    failed, later = (RecallEvent(new_id(), brand, t0, None) for _ in range(2))
    missing = outbox_key(new_id())
    await pipeline.start()
    try:
        committing = pipeline.committing(storage)
        enqueue = committing.enqueue if via == "enqueue" else pipeline.enqueue
        with pytest.raises(ConditionFailed):
            await committing.transact_write(
                [*enqueue(failed), Put({"PK": missing.pk, "SK": "X"}, ItemExists())]
            )
        assert await queued(storage, one) == []
        await committing.transact_write(enqueue(later))

        async def worked() -> bool:
            return gated.worked == [later.event_id]

        await eventually(worked)
    finally:
        await pipeline.stop()
    assert gated.claims == []


async def test_an_item_born_claimed_by_a_process_that_died_is_taken_over_when_its_lease_ends(
    storage: Storage, pipeline: Pipeline, t0: datetime
) -> None:
    """Written leased to a relay that no longer runs: not claimable while
    the lease lasts, then claimed by the next relay (its second attempt)."""
    brand = await new_brand(storage)
    event = RecallEvent(new_id(), brand, t0, None)
    [put] = outbox_actions(event, now=utcnow())
    assert isinstance(put, Put)
    # Long enough that the poll below runs within it on a loaded machine.
    until = utcnow() + timedelta(seconds=1)
    await storage.transact_write([born_put(put, Lease("dead:1:abc", "token", until))])
    # A poll while the lease lasts finds the item and leaves it (the same poll
    # takes it once the lease has ended, below).
    assert await pipeline.relay.poll_once() == 0, "not taken while leased"
    assert (await _stored(storage, event))["leaseOwner"] == "dead:1:abc"

    async def done() -> bool:
        return not await queued(storage, PipelineSettings())

    await eventually(done)
    assert utcnow() >= until


class _Recording:
    """A relay that always has room, and records what it is handed."""

    def __init__(self, until: datetime) -> None:
        self.until = until
        self.handed: list[tuple[dict[str, Any], Any]] = []

    def reserve(self) -> Lease:
        return Lease("here:1:abc", new_id(), self.until)

    def born(self, item: dict[str, Any], lease: Lease, event: Any = None) -> None:
        self.handed.append((item, event))

    def expect(self, item: dict[str, Any]) -> None:
        raise AssertionError("a relay with room is never hinted")


def _scan_event(brand: str, t0: datetime) -> ScanEvent:
    paris = timezone(timedelta(hours=1))
    product = ProductFacts(new_id(), brand, t0.astimezone(paris), ProductStatus.ACTIVE, 7)
    claim = ClaimFacts("d" * 64, t0 + timedelta(days=30), t0 - timedelta(seconds=1))
    return ScanEvent(new_id(), t0, ScanResult.AUTHENTIC, product, "FR", None, "e" * 64, claim)


async def test_the_relay_is_handed_the_event_the_item_was_built_from(
    storage: Storage, settings: PipelineSettings, t0: datetime
) -> None:
    """The item enqueued by this pipeline reaches the relay with its very
    event, not one parsed back; the stored payload is still the event's, and
    parsing it gives an equal event (the relay judges the same facts). An
    equal item built elsewhere (not noted) is parsed, as before; the
    handover keeps nothing once its items committed."""
    relay = _Recording(utcnow() + settings.lease)
    handover = Handover()
    committing = CommittingStorage(storage, relay, handover)
    brand = await new_brand(storage)
    event, other = _scan_event(brand, t0), _scan_event(brand, t0)
    [noted] = outbox_actions(event, settings, now=utcnow())
    assert isinstance(noted, Put)
    handover.note(noted, event)
    [elsewhere] = outbox_actions(other, settings, now=utcnow())
    await committing.transact_write([noted, elsewhere])
    [(item, handed), (other_item, parsed)] = relay.handed
    assert handed is event
    [stored] = [i for i in await queued(storage, settings) if i["id"] == event.event_id]
    assert stored == item
    assert stored["payload"] == event.payload()
    assert event_from_payload(stored["kind"], stored["payload"]) == event
    assert parsed is None and other_item["id"] == other.event_id
    assert len(handover) == 0


def test_the_handover_forgets_the_oldest_past_its_bound(
    settings: PipelineSettings, t0: datetime
) -> None:
    handover = Handover(limit=2)
    events = [_scan_event("B1", t0) for _ in range(3)]
    puts = [outbox_actions(event, settings, now=t0)[0] for event in events]
    for put, event in zip(puts, events, strict=True):
        assert isinstance(put, Put)
        handover.note(put, event)
    assert len(handover) == 2
    first, second, third = puts
    assert isinstance(first, Put) and isinstance(second, Put) and isinstance(third, Put)
    assert handover.find(first) is None
    assert handover.find(second) is events[1]
    assert handover.find(third) is events[2]
    equal = Put(dict(third.item), third.condition)
    assert handover.find(equal) is None, "only the very Put noted"


async def test_the_item_built_born_claimed_is_the_ready_one_born_claimed(
    storage: Storage, pipeline: Pipeline, settings: PipelineSettings, t0: datetime
) -> None:
    """``CommittingStorage.enqueue`` builds at once what ``born_put`` makes of
    ``Pipeline.enqueue``'s item at the commit: same attributes, same order."""
    event = RecallEvent(new_id(), new_id(), t0, "reason")
    committing = CommittingStorage(storage, pipeline.relay, settings=settings, clock=lambda: t0)
    [put] = committing.enqueue(event)
    assert isinstance(put, Put)
    item = put.item
    lease = Lease(item["leaseOwner"], item["leaseToken"], parse_datetime(item["leaseUntil"]))
    [ready] = outbox_actions(event, settings, now=t0)
    assert isinstance(ready, Put)
    expected = born_put(ready, lease)
    assert list(item.items()) == list(expected.item.items())
    assert put.condition == expected.condition


async def test_an_item_not_written_through_the_committing_storage_is_never_leased(
    storage: Storage, pipeline: Pipeline, settings: PipelineSettings, t0: datetime
) -> None:
    """``Pipeline.enqueue``, for a transaction written anywhere, builds a
    ready item even while the relay has room: written through plain storage
    it is found by the poll and worked, not hidden behind a lease nobody holds.
    ``Services`` builds born claimed only when its storage is the committing one."""
    brand = await new_brand(storage)
    event = RecallEvent(new_id(), brand, t0, "reason")
    [put] = pipeline.enqueue(event)
    assert isinstance(put, Put) and put.item["status"] == "READY"
    await storage.transact_write([put])

    async def drained() -> bool:
        return not await queued(storage, settings)

    await eventually(drained)
    plain = _services(storage, pipeline).enqueue(RecallEvent(new_id(), brand, t0, None))
    committed = _services(pipeline.committing(storage), pipeline).enqueue(
        RecallEvent(new_id(), brand, t0, None)
    )
    assert [cast(Put, a).item["status"] for a in [*plain, *committed]] == ["READY", "LEASED"]


def _services(storage: Storage, pipeline: Pipeline) -> Services:
    return Services(
        storage=storage,
        admin_key_hash="0" * 64,
        key_ring=KeyRing.of(SigningKey.generate()),
        hash_salt=bytes(32),
        pipeline=pipeline,
    )


class _LostReply:
    """A store whose transactions commit and then fail, as a reply lost after
    the driver's retries does."""

    def __init__(self, inner: Storage) -> None:
        self.inner = inner
        self.backend = inner.backend

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def transact_write(self, actions: Any) -> None:
        await self.inner.transact_write(actions)
        raise ServiceUnavailable("The reply was lost")


@_VIA
async def test_an_item_whose_commit_reported_a_failure_is_claimed_at_once(
    storage: Storage,
    settings: PipelineSettings,
    t0: datetime,
    monkeypatch: pytest.MonkeyPatch,
    via: str,
) -> None:
    """Born claimed, committed, but the call failed: the relay never got the
    item, whose lease (30 s here) would keep it from every poll. It is hinted
    instead, and claimed and worked at once."""
    gated = Gated(monkeypatch)
    gated.gate.set()
    long_lease = dataclasses.replace(settings, lease=timedelta(seconds=30))
    pipeline = Pipeline(storage, long_lease, cursors=CursorCodec(CURSOR_KEY), clock=utcnow)
    brand = await new_brand(storage)
    event = RecallEvent(new_id(), brand, t0, None)
    await pipeline.start()
    try:
        committing = pipeline.committing(cast(Storage, _LostReply(storage)))
        enqueue = committing.enqueue if via == "enqueue" else pipeline.enqueue
        with pytest.raises(ServiceUnavailable):
            await committing.transact_write(enqueue(event))

        async def worked() -> bool:
            return gated.worked == [event.event_id]

        await eventually(worked)
    finally:
        await pipeline.stop()
    assert gated.claims == [event.event_id]
