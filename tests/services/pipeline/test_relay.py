from __future__ import annotations

import asyncio
import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from domain.enums import ProductStatus, ScanResult, ThreatType
from domain.errors import ProofgateError
from domain.identifiers import new_id
from domain.threats import AlertKey, ClaimFacts
from services.pipeline import (
    AppendEvent,
    Broker,
    DisputeEvent,
    Pipeline,
    PipelineSettings,
    RecallEvent,
    Relay,
    SubscriptionLimits,
)
from services.pipeline.alerts import writer as writer_module
from services.pipeline.alerts.known import KEY_OVERHEAD, KnownAlerts
from services.pipeline.service import outbox_actions
from storage import CursorCodec, Item, Put, Storage
from storage.access_patterns import OUTBOX_PARKED
from tests.services.pipeline._support import (
    CURSOR_KEY,
    Product,
    alerts,
    eventually,
    minutes,
    new_brand,
    queued,
    record_scan,
    stats,
    utcnow,
)


async def parked(storage: Storage) -> list[Item]:
    page = await storage.query(OUTBOX_PARKED, {}, tenant="test", first=100)
    return page.items


async def drained(storage: Storage, settings: PipelineSettings) -> None:
    async def empty() -> bool:
        return not await queued(storage, settings)

    await eventually(empty)


def types_of(items: list[Item]) -> list[str]:
    return sorted(item["type"] for item in items)


async def test_eleven_scans_in_an_hour_raise_one_burst_alert_and_count_it(
    storage: Storage, pipeline: Pipeline, settings: PipelineSettings, t0: datetime
) -> None:
    brand = await new_brand(storage)
    product = Product(brand, t0 - timedelta(days=30))
    for i in range(10):
        await record_scan(storage, product, t0 + minutes(5 * i), pipeline)
    await drained(storage, settings)
    assert await alerts(storage, brand) == []

    await record_scan(storage, product, t0 + minutes(50), pipeline)
    await record_scan(storage, product, t0 + minutes(51), pipeline)
    await drained(storage, settings)
    found = await alerts(storage, brand)
    assert types_of(found) == ["BURST_SCAN"]
    assert found[0]["details"]["scanCount"] == 11
    counters = await stats(storage, brand)
    assert (counters["threatCount"], counters["openThreatCount"]) == (1, 1)


async def test_one_scan_raises_several_alerts_each_persisted_and_counted(
    storage: Storage, pipeline: Pipeline, settings: PipelineSettings, t0: datetime
) -> None:
    brand = await new_brand(storage)
    product = Product(brand, t0 - timedelta(days=30), ProductStatus.RECALLED)
    claim = ClaimFacts("owner-device", t0 + timedelta(days=300), t0 - timedelta(days=1))
    await record_scan(
        storage, product, t0, pipeline, device="other", result=ScanResult.COUNTERFEIT, claim=claim
    )
    await drained(storage, settings)
    found = await alerts(storage, brand)
    assert types_of(found) == ["CLAIMED_PRODUCT_SCAN", "HASH_TAMPERING", "RECALLED_PRODUCT_SCAN"]
    assert len({item["id"] for item in found}) == 3
    counters = await stats(storage, brand)
    assert (counters["threatCount"], counters["openThreatCount"]) == (3, 3)


async def test_the_claimants_own_scans_never_alert(
    storage: Storage, pipeline: Pipeline, settings: PipelineSettings, t0: datetime
) -> None:
    brand = await new_brand(storage)
    product = Product(brand, t0 - timedelta(days=30))
    claim = ClaimFacts("owner-device", None, t0 - timedelta(days=1))
    await record_scan(storage, product, t0, pipeline, device="owner-device", claim=claim)
    await drained(storage, settings)
    assert await alerts(storage, brand) == []


async def test_reprocessing_an_event_creates_and_counts_nothing_twice(
    storage: Storage, pipeline: Pipeline, settings: PipelineSettings, t0: datetime
) -> None:
    brand = await new_brand(storage)
    product = Product(brand, t0 - timedelta(days=30))
    event = await record_scan(storage, product, t0, pipeline, result=ScanResult.COUNTERFEIT)
    await drained(storage, settings)
    before = await alerts(storage, brand)
    assert types_of(before) == ["HASH_TAMPERING"]

    await storage.transact_write(outbox_actions(event, settings))
    pipeline.relay.wake()
    await drained(storage, settings)
    assert await alerts(storage, brand) == before
    assert (await stats(storage, brand))["threatCount"] == 1


def _counting_alert_writes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Alert ids the relay tried to create, whether or not the store took them."""
    attempts: list[str] = []
    real = writer_module.transact

    async def counting(storage: Storage, actions: Any) -> Any:
        first = actions[0]
        if isinstance(first, Put) and first.item.get("entity") == "ThreatAlert":
            attempts.append(first.item["id"])
        return await real(storage, actions)

    monkeypatch.setattr(writer_module, "transact", counting)
    return attempts


async def test_a_known_alert_is_not_written_again(
    storage: Storage,
    pipeline: Pipeline,
    settings: PipelineSettings,
    t0: datetime,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    attempts = _counting_alert_writes(monkeypatch)
    brand = await new_brand(storage)
    product = Product(brand, t0 - timedelta(days=30))
    for i in range(13):
        await record_scan(storage, product, t0 + minutes(i), pipeline)
    await drained(storage, settings)
    found = await alerts(storage, brand)
    assert types_of(found) == ["BURST_SCAN"]
    assert attempts == [found[0]["id"]], "the 12th and 13th scans draft it again, unwritten"
    assert (await stats(storage, brand))["threatCount"] == 1


async def test_an_alert_this_relay_does_not_know_is_refused_by_the_store(
    storage: Storage,
    pipeline: Pipeline,
    settings: PipelineSettings,
    t0: datetime,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Positive control for the test above, and the path another process's
    alert takes: the conditional create fails, nothing is counted twice, and
    the key is known from then on."""
    brand = await new_brand(storage)
    product = Product(brand, t0 - timedelta(days=30))
    event = await record_scan(storage, product, t0, pipeline, result=ScanResult.COUNTERFEIT)
    await drained(storage, settings)
    before = await alerts(storage, brand)
    pipeline.relay.alerts.known = KnownAlerts()
    attempts = _counting_alert_writes(monkeypatch)
    for _ in range(2):
        await storage.transact_write(outbox_actions(event, settings))
        pipeline.relay.wake()
        await drained(storage, settings)
    assert attempts == [before[0]["id"]]
    assert await alerts(storage, brand) == before
    assert (await stats(storage, brand))["threatCount"] == 1


def test_known_alerts_are_bounded() -> None:
    known = KnownAlerts(max_bytes=2 * (KEY_OVERHEAD + len("brand") + len("product")))
    keys = [
        AlertKey("brand", "product", ThreatType.BURST_SCAN, datetime(2026, 1, 1, i, tzinfo=UTC))
        for i in range(3)
    ]
    for key in keys:
        known.add(key)
    known.add(keys[2])
    assert len(known) == 2
    assert keys[0] not in known and keys[1] in known and keys[2] in known
    assert known.latest("brand", "product", ThreatType.BURST_SCAN) == keys[2].window_start


def test_known_alerts_hold_their_bytes_whatever_the_ids() -> None:
    """Ids up to 1,000 characters and a flood of new windows: the keys held
    never take more than the bound, counted from their ids, and the newest
    stay known (docs/design.md, Memory growth)."""
    known = KnownAlerts(max_bytes=64 * 1024)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for index in range(5_000):
        product = "p" * (1 + index % 1_000)
        key = AlertKey("b" * 100, product, ThreatType.BURST_SCAN, start + timedelta(seconds=index))
        known.add(key)
        assert known.bytes <= 64 * 1024
        assert key in known
    assert 64 * 1024 // (KEY_OVERHEAD + 1_100) <= len(known) < 5_000
    huge = AlertKey("b", "p" * 100_000, ThreatType.BURST_SCAN, start)
    known.add(huge)
    assert huge not in known and known.bytes <= 64 * 1024


def test_the_latest_known_window_is_forgotten_with_its_key() -> None:
    """Its key forgotten, a window is no longer told known: the latest
    is then the newest added since."""
    known = KnownAlerts(max_bytes=2 * (KEY_OVERHEAD + len("brand") + len("product")))
    keys = [
        AlertKey("brand", "product", ThreatType.BURST_SCAN, datetime(2026, 1, 1, i, tzinfo=UTC))
        for i in range(3)
    ]
    for key in (keys[2], keys[0], keys[1]):
        known.add(key)
    assert keys[2] not in known
    assert known.latest("brand", "product", ThreatType.BURST_SCAN) == keys[1].window_start
    assert known.latest("brand", "product", ThreatType.SCAN_VELOCITY) is None


async def test_command_events_raise_their_alerts_through_the_outbox(
    storage: Storage, pipeline: Pipeline, settings: PipelineSettings, t0: datetime
) -> None:
    brand, product = await new_brand(storage), new_id()
    events = [
        RecallEvent(product, brand, t0, "contaminated batch"),
        DisputeEvent(new_id(), product, brand, t0 + minutes(1), "it is mine", 1),
        AppendEvent(product, brand, 3, t0 + timedelta(hours=80), t0 + minutes(2)),
        AppendEvent(product, brand, 2, t0 + minutes(2), t0 + minutes(2) - timedelta(hours=72)),
    ]
    for event in events:
        await pipeline.committing(storage).transact_write(pipeline.enqueue(event))
    await drained(storage, settings)
    found = await alerts(storage, brand)
    assert types_of(found) == ["CHAIN_GAP", "OWNERSHIP_DISPUTE", "PRODUCT_RECALL"]
    assert (await stats(storage, brand))["threatCount"] == 3


async def test_a_failing_item_is_retried_with_backoff_then_parked(
    storage: Storage,
    pipeline: Pipeline,
    settings: PipelineSettings,
    t0: datetime,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[datetime] = []

    async def broken(*args: Any, **kwargs: Any) -> list[Any]:
        calls.append(datetime.now(UTC))
        raise ProofgateError("rules exploded")

    monkeypatch.setattr(writer_module, "alert_drafts", broken)
    brand = await new_brand(storage)
    event = RecallEvent(new_id(), brand, t0, None)
    await storage.transact_write(pipeline.enqueue(event))

    async def is_parked() -> bool:
        return len(await parked(storage)) == 1

    await eventually(is_parked)
    [item] = await parked(storage)
    assert item["id"] == event.event_id
    assert item["attempts"] == settings.max_attempts == len(calls)
    assert item["lastError"] == "rules exploded"
    assert await queued(storage, settings) == []
    gaps = [later - earlier for earlier, later in itertools.pairwise(calls)]
    assert all(gap >= settings.retry_base for gap in gaps)
    assert await alerts(storage, brand) == []


async def test_an_expired_lease_is_taken_over_after_a_crash_mid_item(
    storage: Storage, settings: PipelineSettings, t0: datetime
) -> None:
    """Relay A claims an item, writes one of its alerts and dies; relay B takes
    the item over once the lease expires. Every alert exists once, counted once."""
    short = PipelineSettings(**{**_fields(settings), "lease": timedelta(milliseconds=300)})
    brand = await new_brand(storage)
    product = Product(brand, t0 - timedelta(days=30), ProductStatus.RECALLED)
    await record_scan(storage, product, t0, result=ScanResult.COUNTERFEIT)

    crashed = Relay(
        storage,
        Broker(queue_max=8, limits=SubscriptionLimits(per_process=8), overlap=short.tail_overlap),
        short,
        utcnow,
    )
    persist = crashed.alerts.persist
    writes = 0

    async def persist_then_die(*args: Any) -> bool:
        nonlocal writes
        await persist(*args)
        writes += 1
        raise asyncio.CancelledError

    crashed.alerts.persist = persist_then_die  # type: ignore[method-assign]
    assert await crashed.poll_once() == 1
    claimed = await crashed._lane.get()
    with pytest.raises(asyncio.CancelledError):
        await crashed.handle(claimed)
    assert writes == 1 and len(await alerts(storage, brand)) == 1

    takeover = Pipeline(storage, short, cursors=CursorCodec(CURSOR_KEY), clock=utcnow)
    assert await takeover.relay.poll_once() == 0, "the lease still holds"
    await takeover.start()
    try:
        await drained(storage, short)
    finally:
        await takeover.stop()
    found = await alerts(storage, brand)
    assert types_of(found) == ["HASH_TAMPERING", "RECALLED_PRODUCT_SCAN"]
    assert (await stats(storage, brand))["threatCount"] == 2


async def test_two_relays_on_one_store_process_each_item_once(
    storage: Storage, settings: PipelineSettings, t0: datetime
) -> None:
    brand = await new_brand(storage)
    relays = [
        Pipeline(storage, settings, cursors=CursorCodec(CURSOR_KEY), clock=utcnow) for _ in range(2)
    ]
    products = [Product(brand, t0 - timedelta(days=30)) for _ in range(4)]
    for i in range(12):
        for product in products:
            await record_scan(storage, product, t0 + minutes(i), result=ScanResult.COUNTERFEIT)
    for relay in relays:
        await relay.start()
    try:
        await drained(storage, settings)
    finally:
        for relay in relays:
            await relay.stop()
    found = await alerts(storage, brand)
    assert types_of(found) == ["BURST_SCAN"] * 4 + ["HASH_TAMPERING"] * 4
    assert (await stats(storage, brand))["threatCount"] == len(found)
    assert sum(relay.relay.alerts.created for relay in relays) == len(found)


def _fields(settings: PipelineSettings) -> dict[str, Any]:
    return {name: getattr(settings, name) for name in settings.__dataclass_fields__}


async def test_stopping_releases_the_leases_of_unfinished_items(
    storage: Storage, settings: PipelineSettings, t0: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An item stuck mid-processing when its process stops is due again at
    once, unleased, with the attempt it never finished given back."""
    started = asyncio.Event()

    async def stuck(*args: Any, **kwargs: Any) -> list[Any]:
        started.set()
        await asyncio.Event().wait()
        return []

    monkeypatch.setattr(writer_module, "alert_drafts", stuck)
    stopping = Pipeline(storage, settings, cursors=CursorCodec(CURSOR_KEY), clock=utcnow)
    brand = await new_brand(storage)
    event = RecallEvent(new_id(), brand, t0, None)
    await stopping.start()
    try:
        await storage.transact_write(stopping.enqueue(event))
        await asyncio.wait_for(started.wait(), 5)
        [leased] = await queued(storage, settings)
        assert (leased["status"], leased["leaseOwner"]) == ("LEASED", stopping.relay.owner)
        assert leased["attempts"] == 1
    finally:
        await stopping.stop()
    [released] = await queued(storage, settings)
    assert released["id"] == event.event_id
    assert released["status"] == "READY"
    assert "leaseOwner" not in released and "leaseToken" not in released
    assert released["attempts"] == 0
    assert released["GSI2SK"] < leased["GSI2SK"], "due now, not at the end of the lease"
