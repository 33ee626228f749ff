"""The one seam between commands and the threat pipeline.

Every command that can raise a threat describes what happened as a *signal*
and asks ``pipeline_hook`` for the write actions that hand it to the pipeline.
The command appends those actions to its own transaction, so a signal is
delivered exactly when the change it describes commits: a scan and its outbox
item (AP19), a recall and its PRODUCT_RECALL alert, a dispute and its
OWNERSHIP_DISPUTE alert.

The hook returns the signal's outbox item (``resolvers.pipeline``);
the relay raises the alerts. What it returns must not touch an item the
command's transaction already writes (DynamoDB refuses two actions on one item): a scan's
transaction writes the scan, the product and the brand's STATS, so threat
counters are bumped by the relay, not here. Signals carry facts, never the
raw device fingerprint or IP: only their salted hashes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, TypeAlias

from domain.enums import ScanResult
from domain.threats.rules import ClaimFacts, ProductFacts

if TYPE_CHECKING:
    from storage import WriteAction

    from .context import Services

__all__ = [
    "ClaimDisputed",
    "EventAppended",
    "PipelineSignal",
    "ProductRecalled",
    "ScanRecorded",
    "pipeline_hook",
]


@dataclass(frozen=True)
class ScanRecorded:
    """A verification was recorded (the input of the scan rules)."""

    scan_id: str
    scanned_at: datetime
    country: str | None
    city: str | None
    device_hash: str | None
    result: ScanResult
    product: ProductFacts
    claim: ClaimFacts | None


@dataclass(frozen=True)
class EventAppended:
    """A provenance event was appended (CHAIN_GAP)."""

    brand_id: str
    product_id: str
    sequence: int
    occurred_at: datetime
    previous_occurred_at: datetime | None


@dataclass(frozen=True)
class ProductRecalled:
    """``recallProduct`` succeeded (PRODUCT_RECALL); it happens once per product."""

    brand_id: str
    product_id: str
    recalled_at: datetime
    reason: str | None


@dataclass(frozen=True)
class ClaimDisputed:
    """``disputeClaim`` recorded a dispute (OWNERSHIP_DISPUTE); ``dispute_count``
    includes this one. Nothing about the claimant."""

    dispute_id: str
    brand_id: str
    product_id: str
    disputed_at: datetime
    reason: str | None
    dispute_count: int


PipelineSignal: TypeAlias = ScanRecorded | EventAppended | ProductRecalled | ClaimDisputed


def pipeline_hook(signal: PipelineSignal, services: Services) -> list[WriteAction]:
    """The actions that deliver ``signal`` to the threat pipeline, written in
    the same transaction as the change it describes: its outbox item."""
    from .pipeline.hook import enqueue_signal

    return enqueue_signal(signal, services)
