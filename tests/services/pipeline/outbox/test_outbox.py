from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from domain.enums import ProductStatus, ScanResult
from domain.errors import ConditionFailed
from domain.threats import ClaimFacts, ProductFacts
from services.pipeline import (
    AppendEvent,
    DisputeEvent,
    PipelineSettings,
    RecallEvent,
    ScanEvent,
    ShardLayout,
    WebhookEvent,
)
from services.pipeline.events import event_from_payload
from services.pipeline.outbox.items import (
    ClaimedItem,
    Lease,
    claim_update,
    complete_delete,
    outbox_put,
    retry_update,
    shard_of,
)
from storage import Item, Storage
from storage.access_patterns import OUTBOX_DUE

T0 = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
EVENTS = [
    ScanEvent(
        "S1",
        T0,
        ScanResult.COUNTERFEIT,
        ProductFacts("P1", "B1", T0 - timedelta(days=3), ProductStatus.RECALLED, 7),
        country="FR",
        city="Lyon",
        device_hash="d" * 64,
        claim=ClaimFacts("c" * 64, None, T0 - timedelta(days=1)),
    ),
    RecallEvent("P1", "B1", T0, "Lead paint"),
    DisputeEvent("D1", "P1", "B1", T0, "Mine", 3),
    AppendEvent("P1", "B1", 4, T0, T0 - timedelta(days=4)),
    AppendEvent("P1", "B1", 1, T0, None),
    WebhookEvent("whd_1", "wh_1", "B1", "thr_1", T0),
]


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: type(e).__name__)
def test_events_round_trip_through_the_stored_payload(event: object) -> None:
    put = outbox_put(event, now=T0, settings=PipelineSettings())  # type: ignore[arg-type]
    assert event_from_payload(put.item["kind"], put.item["payload"]) == event


def test_event_ids_are_deterministic_and_distinct() -> None:
    ids = [event.event_id for event in EVENTS]
    assert len(set(ids)) == len(ids)
    assert ids[0] == "scan:S1" and ids[3] == "event:P1:4"


def test_shards_are_stable_and_spread() -> None:
    shards = [shard_of(f"scan:{n}", 8) for n in range(400)]
    assert shards == [shard_of(f"scan:{n}", 8) for n in range(400)]
    assert set(shards) == set(range(8))
    assert max(shards.count(s) for s in range(8)) < 80


def test_items_go_to_the_current_layouts_shards_and_relays_poll_every_listed_layout() -> None:
    settings = PipelineSettings(shard_layouts=(ShardLayout(1, 8), ShardLayout(2, 2)))
    put = outbox_put(EVENTS[1], now=T0, settings=settings)
    assert put.item["shardVersion"] == 2 and put.item["shard"] in (0, 1)
    assert put.item["GSI2PK"] == OUTBOX_DUE.partition_key.format({"shard": put.item["shard"]})
    assert list(settings.shards) == list(range(8))


def test_shard_layouts_need_increasing_versions() -> None:
    with pytest.raises(Exception, match="increasing versions"):
        PipelineSettings(shard_layouts=(ShardLayout(2, 4), ShardLayout(1, 4)))


async def _due(storage: Storage, before: datetime) -> list[Item]:
    items: list[Item] = []
    for shard in PipelineSettings().shards:
        items += (
            await storage.query(OUTBOX_DUE, {"shard": shard, "before": before}, tenant="t")
        ).items
    return items


async def test_one_of_several_concurrent_claims_wins(storage: Storage) -> None:
    put = outbox_put(EVENTS[1], now=T0, settings=PipelineSettings())
    await storage.transact_write([put])
    [item] = await _due(storage, T0 + timedelta(seconds=1))
    leases = [Lease(f"relay-{n}", f"token-{n}", T0 + timedelta(seconds=30)) for n in range(5)]
    outcomes = await asyncio.gather(
        *(storage.transact_write([claim_update(item, lease)]) for lease in leases),
        return_exceptions=True,
    )
    assert sum(outcome is None for outcome in outcomes) == 1
    assert all(isinstance(o, ConditionFailed) for o in outcomes if o is not None)


async def test_a_lease_hides_the_item_until_it_expires_and_only_its_holder_completes(
    storage: Storage,
) -> None:
    put = outbox_put(EVENTS[1], now=T0, settings=PipelineSettings())
    await storage.transact_write([put])
    lease = Lease("relay-a", "token-a", T0 + timedelta(seconds=30))
    await storage.transact_write([claim_update(put.item, lease)])
    assert await _due(storage, T0 + timedelta(seconds=29)) == []
    [expired] = await _due(storage, T0 + timedelta(seconds=31))
    assert (expired["leaseOwner"], expired["attempts"], expired["status"]) == (
        "relay-a",
        1,
        "LEASED",
    )
    takeover = Lease("relay-b", "token-b", T0 + timedelta(seconds=60))
    await storage.transact_write([claim_update(expired, takeover)])
    assert ClaimedItem.from_item(expired, takeover).attempts == 2
    with pytest.raises(ConditionFailed):
        await storage.transact_write([complete_delete(EVENTS[1].event_id, "token-a")])
    with pytest.raises(ConditionFailed):
        await storage.transact_write(
            [retry_update(EVENTS[1].event_id, "token-a", due=T0, error="late")]
        )
    await storage.transact_write([complete_delete(EVENTS[1].event_id, "token-b")])
    assert await _due(storage, datetime(9999, 1, 1, tzinfo=UTC)) == []


async def test_an_event_is_enqueued_once(storage: Storage) -> None:
    put = outbox_put(EVENTS[0], now=T0, settings=PipelineSettings())
    await storage.transact_write([put])
    with pytest.raises(ConditionFailed):
        await storage.transact_write([put])
