"""The pipeline hook hands every signal to the threat pipeline as one outbox item."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import cast

from domain.datetimes import format_datetime
from domain.enums import ProductStatus, ScanResult
from domain.threats.rules import ProductFacts
from resolvers.context import Services
from resolvers.pipeline_hook import (
    ClaimDisputed,
    EventAppended,
    PipelineSignal,
    ProductRecalled,
    ScanRecorded,
    pipeline_hook,
)
from storage import ItemAbsent, Put

NOW = datetime(2030, 1, 1, tzinfo=UTC)


class _NoPipeline:
    """Services of a process that runs no relay: commands still enqueue."""

    pipeline = None

    @staticmethod
    def clock() -> datetime:
        return NOW


def test_every_signal_adds_one_conditional_outbox_item() -> None:
    facts = ProductFacts("P", "B", NOW, ProductStatus.ACTIVE, 1)
    signals: list[PipelineSignal] = [
        ScanRecorded("S", NOW, "FR", None, None, ScanResult.AUTHENTIC, facts, None),
        EventAppended("B", "P", 1, NOW + timedelta(days=2), None),
        ProductRecalled("B", "P", NOW, "reason"),
        ClaimDisputed("D", "B", "P", NOW, "reason", 1),
    ]
    ids = []
    for signal in signals:
        [action] = pipeline_hook(signal, cast(Services, _NoPipeline()))
        assert isinstance(action, Put) and isinstance(action.condition, ItemAbsent)
        assert action.item["entity"] == "OutboxItem" and action.item["status"] == "READY"
        assert action.item["dueAt"] == format_datetime(NOW), (
            "due when enqueued, whatever the event's time"
        )
        ids.append(action.item["id"])
    assert ids == ["scan:S", "event:P:1", "recall:P", "dispute:P:D"]
