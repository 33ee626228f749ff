"""``Services.enqueue`` hands every event to the threat pipeline as one outbox
item, whether or not this process runs a pipeline."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import cast

import pytest

from domain.datetimes import format_datetime
from domain.enums import ProductStatus, ScanResult
from domain.signing import KeyRing, SigningKey
from domain.threats.rules import ProductFacts
from services.context import Services
from services.pipeline import Pipeline
from services.pipeline.events import (
    AppendEvent,
    DisputeEvent,
    OutboxEvent,
    RecallEvent,
    ScanEvent,
)
from storage import ItemAbsent, Put, Storage, WriteAction

NOW = datetime(2030, 1, 1, tzinfo=UTC)
FACTS = ProductFacts("P", "B", NOW, ProductStatus.ACTIVE, 1)
EVENTS: list[OutboxEvent] = [
    ScanEvent("S", NOW, ScanResult.AUTHENTIC, FACTS, country="FR"),
    AppendEvent("P", "B", 1, NOW + timedelta(days=2), None),
    RecallEvent("P", "B", NOW, "reason"),
    DisputeEvent("D", "P", "B", NOW, "reason", 1),
]


def services(pipeline: Pipeline | None = None) -> Services:
    return Services(
        storage=cast(Storage, object()),
        admin_key_hash="0" * 64,
        key_ring=KeyRing.of(SigningKey.generate()),
        hash_salt=bytes(32),
        clock=lambda: NOW,
        pipeline=pipeline,
    )


class _Pipeline:
    """A running pipeline, as far as ``enqueue`` is concerned."""

    def __init__(self) -> None:
        self.enqueued: list[OutboxEvent] = []

    def enqueue(self, event: OutboxEvent) -> list[WriteAction]:
        self.enqueued.append(event)
        return []


def test_without_a_pipeline_every_event_adds_one_conditional_outbox_item() -> None:
    ids = []
    for event in EVENTS:
        [action] = services().enqueue(event)
        assert isinstance(action, Put) and isinstance(action.condition, ItemAbsent)
        assert action.item["entity"] == "OutboxItem" and action.item["status"] == "READY"
        assert action.item["dueAt"] == format_datetime(NOW), (
            "due when enqueued, whatever the event's time"
        )
        ids.append(action.item["id"])
    assert ids == ["scan:S", "event:P:1", "recall:P", "dispute:P:D"]


@pytest.mark.parametrize("event", EVENTS, ids=lambda event: type(event).__name__)
def test_a_running_pipeline_takes_the_event_itself(event: OutboxEvent) -> None:
    pipeline = _Pipeline()
    services(cast(Pipeline, pipeline)).enqueue(event)
    assert pipeline.enqueued == [event]
