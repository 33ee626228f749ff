"""What ``pipeline_hook`` does: turn a command's signal into an outbox item.

Every signal, scans, appends, recalls and disputes alike, becomes an outbox
event written in the command's own transaction, so every alert is raised by
the relay on one path: created once, counted once, published and delivered.
"""

from __future__ import annotations

from proofgate.storage import WriteAction

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


def signal_event(signal: PipelineSignal) -> OutboxEvent:
    match signal:
        case ScanRecorded():
            return ScanEvent(
                scan_id=signal.scan_id,
                scanned_at=signal.scanned_at,
                result=signal.result,
                product=signal.product,
                country=signal.country,
                city=signal.city,
                device_hash=signal.device_hash,
                claim=signal.claim,
            )
        case EventAppended():
            return AppendEvent(
                product_id=signal.product_id,
                brand_id=signal.brand_id,
                sequence=signal.sequence,
                occurred_at=signal.occurred_at,
                previous_occurred_at=signal.previous_occurred_at,
            )
        case ProductRecalled():
            return RecallEvent(
                signal.product_id, signal.brand_id, signal.recalled_at, signal.reason
            )
        case ClaimDisputed():
            return DisputeEvent(
                dispute_id=signal.dispute_id,
                product_id=signal.product_id,
                brand_id=signal.brand_id,
                disputed_at=signal.disputed_at,
                reason=signal.reason,
                dispute_count=signal.dispute_count,
            )


def enqueue_signal(signal: PipelineSignal, services: Services) -> list[WriteAction]:
    event = signal_event(signal)
    if services.pipeline is None:
        return outbox_actions(event, now=services.clock())
    return services.pipeline.enqueue(event)
