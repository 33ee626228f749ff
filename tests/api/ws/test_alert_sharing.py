"""The shared-alert contract (docs/design.md, Alert fan-out): each
layer of a fan-out hands the next the object it was given, never a copy,
because the next layer shares its work by that object's identity. Each link
is checked with real parts, and each with a planted copy that the next layer
does not share, so a layer that starts copying fails here."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from graphql import ExecutionResult

from api.graphql.execution.fanout import SharedEvents, Sharers
from api.ws.frames import SharedPayloads
from domain.enums import ScanResult
from resolvers.threats.live_alerts import live_alert
from services.pipeline import Pipeline, PipelineSettings
from storage import CursorCodec, Item
from storage.sqlite import open_sqlite
from tests.services.pipeline._support import Product, new_brand, record_scan, utcnow

CURSOR_KEY = bytes(range(32))
FAST = PipelineSettings(poll_interval=timedelta(milliseconds=20))


@pytest.fixture
async def pipeline() -> AsyncIterator[Pipeline]:
    storage = await open_sqlite(":memory:", cursor_key=CURSOR_KEY)
    running = Pipeline(storage, FAST, cursors=CursorCodec(CURSOR_KEY), clock=utcnow)
    await running.start()
    yield running
    await running.stop()
    await storage.close()


async def test_the_broker_offers_every_subscriber_one_item(pipeline: Pipeline) -> None:
    storage = pipeline.storage
    brand = await new_brand(storage)
    subscribers = [await pipeline.subscribe(brand) for _ in range(3)]
    at = datetime(2026, 3, 10, 12, tzinfo=UTC)
    product = Product(brand, at - timedelta(days=1))
    await record_scan(storage, product, at, pipeline, result=ScanResult.COUNTERFEIT)
    items: list[Item | None] = [
        await asyncio.wait_for(subscriber.next(), 5) for subscriber in subscribers
    ]
    assert items[0] is not None
    assert all(item is items[0] for item in items)
    for subscriber in subscribers:
        pipeline.unsubscribe(subscriber)


def _item(alert_id: str) -> Item:
    return {
        "id": alert_id,
        "brandId": "B1",
        "productId": "P1",
        "type": "HASH_TAMPERING",
        "severity": "HIGH",
        "details": "tampered",
        "detectedAt": "2026-03-10T12:00:00.000000Z",
        "recordedAt": "2026-03-10T12:00:00.000000Z",
        "resolved": False,
    }


def test_the_resolver_maps_one_item_to_one_alert() -> None:
    item = _item("A1")
    assert live_alert(item) is live_alert(item)
    planted = copy.copy(item)
    assert live_alert(planted) is not live_alert(item), "a copied item is another alert"


def test_the_executor_runs_one_alert_once_and_hands_out_one_data_object() -> None:
    events, sharers = SharedEvents(), Sharers(plan="plan")
    alert = live_alert(_item("A2"))
    data = {"threatAlerts": {"id": "A2"}}

    def execute() -> ExecutionResult:
        return ExecutionResult({**data}, None)

    results = [events.result((sharers, id(alert)), alert, execute) for _ in range(3)]
    assert not isinstance(results[0], asyncio.Future)
    answers = [r for r in results if isinstance(r, ExecutionResult)]
    assert events.executed == 1
    assert answers[0] is not answers[1], "each subscriber has its own result"
    assert all(answer.data is answers[0].data for answer in answers), "over one data object"
    planted = copy.copy(alert)
    events.result((sharers, id(planted)), planted, execute)
    assert events.executed == 2, "a copied alert runs again"


def test_the_socket_encodes_one_data_object_once() -> None:
    payloads = SharedPayloads()
    data = {"threatAlerts": {"id": "A3"}}
    assert payloads.payload(data) is payloads.payload(data)
    assert (payloads.encoded, payloads.shared) == (1, 1)
    payloads.payload(copy.copy(data))
    assert payloads.encoded == 2, "a copied data object is encoded again"
