"""Outbox items a command commits in this process are born claimed by its
relay while the lane has room, and worked without a claim's write
(docs/design.md, Pipeline)."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import datetime, timedelta
from typing import Any

import pytest

from domain.datetimes import parse_datetime
from domain.errors import ConditionFailed
from domain.identifiers import new_id
from services.pipeline import Pipeline, PipelineSettings, RecallEvent
from services.pipeline import relay as relay_module
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
        claim_update = relay_module.claim_update

        async def slow(storage: Storage, event: Any, threats: Any, **_: Any) -> list[Any]:
            await self.gate.wait()
            self.worked.append(event.event_id)
            return []

        def counted(item: Any, lease: Any) -> Any:
            self.claims.append(item["id"])
            return claim_update(item, lease)

        monkeypatch.setattr(relay_module, "alert_drafts", slow)
        monkeypatch.setattr(relay_module, "claim_update", counted)


async def _stored(storage: Storage, event: RecallEvent) -> dict[str, Any]:
    [item] = [i for i in await queued(storage, PipelineSettings()) if i["id"] == event.event_id]
    return item


async def test_an_item_committed_with_room_is_born_claimed_and_worked_without_a_claim(
    storage: Storage, settings: PipelineSettings, t0: datetime, monkeypatch: pytest.MonkeyPatch
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
        before = utcnow()
        await committing.transact_write(pipeline.enqueue(first))
        await committing.transact_write(pipeline.enqueue(second))
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


async def test_a_transaction_that_fails_takes_no_room_and_writes_nothing(
    storage: Storage, settings: PipelineSettings, t0: datetime, monkeypatch: pytest.MonkeyPatch
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
        with pytest.raises(ConditionFailed):
            await committing.transact_write(
                [*pipeline.enqueue(failed), Put({"PK": missing.pk, "SK": "X"}, ItemExists())]
            )
        assert await queued(storage, one) == []
        await committing.transact_write(pipeline.enqueue(later))

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
    until = utcnow() + timedelta(milliseconds=300)
    await storage.transact_write([born_put(put, Lease("dead:1:abc", "token", until))])
    await asyncio.sleep(0.1)
    assert (await _stored(storage, event))["leaseOwner"] == "dead:1:abc", "not taken while leased"

    async def done() -> bool:
        return not await queued(storage, PipelineSettings())

    await eventually(done)
    assert utcnow() >= until
