"""What ``pipeline_hook`` does: turn a command's signal into an outbox item.

Every signal, scans, appends, recalls and disputes alike, becomes an outbox
event written in the command's own transaction, so every alert is raised by
the relay on one path: created once, counted once, published and delivered.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import fields

from storage import WriteAction

from ..context import Services
from ..pipeline_hook import (
    ClaimDisputed,
    EventAppended,
    PipelineSignal,
    ProductRecalled,
    ScanRecorded,
)
from .events import AppendEvent, DisputeEvent, OutboxEvent, RecallEvent, ScanEvent
from .service import outbox_actions

__all__ = ["enqueue_signal", "signal_event"]


_EVENT_OF: Mapping[type[PipelineSignal], Callable[..., OutboxEvent]] = {
    ScanRecorded: ScanEvent,
    EventAppended: AppendEvent,
    ProductRecalled: RecallEvent,
    ClaimDisputed: DisputeEvent,
}


def signal_event(signal: PipelineSignal) -> OutboxEvent:
    """A signal's event carries each of its facts under the same name; an
    event's own extra fields keep their defaults."""
    facts = {field.name: getattr(signal, field.name) for field in fields(signal)}
    return _EVENT_OF[type(signal)](**facts)


def enqueue_signal(signal: PipelineSignal, services: Services) -> list[WriteAction]:
    event = signal_event(signal)
    if services.pipeline is None:
        return outbox_actions(event, now=services.clock())
    return services.pipeline.enqueue(event)
