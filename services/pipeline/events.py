"""What a command hands the pipeline: one event per fact that may raise alerts.

Each event has a deterministic id (so a command retried with the same facts
enqueues it once) and round-trips through a stored map, because the relay that
processes it may run in another process, after a restart.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, ClassVar, TypeAlias

from domain.datetimes import format_datetime, parse_datetime
from domain.enums import ProductStatus, ScanResult
from domain.errors import BadUserInput, ProofgateError
from domain.threats import ClaimFacts, ProductFacts

__all__ = [
    "AppendEvent",
    "DisputeEvent",
    "EventKind",
    "OutboxEvent",
    "RecallEvent",
    "ScanEvent",
    "WebhookEvent",
    "event_from_payload",
]


class EventKind(StrEnum):
    SCAN = "SCAN"
    RECALL = "RECALL"
    DISPUTE = "DISPUTE"
    APPEND = "APPEND"
    WEBHOOK = "WEBHOOK"


def _time(value: datetime | None) -> str | None:
    return None if value is None else format_datetime(value)


def _parse(value: Any) -> datetime | None:
    return None if value is None else parse_datetime(value)


@dataclass(frozen=True, slots=True)
class ScanEvent:
    """A recorded scan, with the product and claim as the scan transaction
    read them, so a late reprocessing judges the same facts."""

    kind: ClassVar[EventKind] = EventKind.SCAN
    scan_id: str
    scanned_at: datetime
    result: ScanResult
    product: ProductFacts
    country: str | None = None
    city: str | None = None
    device_hash: str | None = None
    claim: ClaimFacts | None = None

    @property
    def event_id(self) -> str:
        return f"scan:{self.scan_id}"

    @property
    def brand_id(self) -> str:
        return self.product.brand_id

    @property
    def product_id(self) -> str:
        return self.product.product_id

    @property
    def occurred_at(self) -> datetime:
        return self.scanned_at

    def payload(self) -> dict[str, Any]:
        product = self.product
        claim = self.claim
        return {
            "scanId": self.scan_id,
            "scannedAt": format_datetime(self.scanned_at),
            "result": self.result.value,
            "country": self.country,
            "city": self.city,
            "deviceHash": self.device_hash,
            "product": {
                "productId": product.product_id,
                "brandId": product.brand_id,
                "createdAt": format_datetime(product.created_at),
                "status": product.status.value,
                "scanCount": product.scan_count,
            },
            "claim": None
            if claim is None
            else {
                "deviceHash": claim.device_hash,
                "expiresAt": _time(claim.expires_at),
                "claimedAt": _time(claim.claimed_at),
            },
        }

    @classmethod
    def from_payload(cls, data: Mapping[str, Any]) -> ScanEvent:
        product = data["product"]
        claim = data.get("claim")
        return cls(
            scan_id=data["scanId"],
            scanned_at=parse_datetime(data["scannedAt"]),
            result=ScanResult(data["result"]),
            product=ProductFacts(
                product_id=product["productId"],
                brand_id=product["brandId"],
                created_at=parse_datetime(product["createdAt"]),
                status=ProductStatus(product["status"]),
                scan_count=int(product["scanCount"]),
            ),
            country=data.get("country"),
            city=data.get("city"),
            device_hash=data.get("deviceHash"),
            claim=None
            if claim is None
            else ClaimFacts(
                claim["deviceHash"], _parse(claim.get("expiresAt")), _parse(claim.get("claimedAt"))
            ),
        )


@dataclass(frozen=True, slots=True)
class RecallEvent:
    kind: ClassVar[EventKind] = EventKind.RECALL
    product_id: str
    brand_id: str
    recalled_at: datetime
    reason: str | None = None

    @property
    def event_id(self) -> str:
        return f"recall:{self.product_id}"

    @property
    def occurred_at(self) -> datetime:
        return self.recalled_at

    def payload(self) -> dict[str, Any]:
        return {
            "productId": self.product_id,
            "brandId": self.brand_id,
            "recalledAt": format_datetime(self.recalled_at),
            "reason": self.reason,
        }

    @classmethod
    def from_payload(cls, data: Mapping[str, Any]) -> RecallEvent:
        return cls(
            data["productId"],
            data["brandId"],
            parse_datetime(data["recalledAt"]),
            data.get("reason"),
        )


@dataclass(frozen=True, slots=True)
class DisputeEvent:
    """``dispute_id`` names the dispute record the command wrote."""

    kind: ClassVar[EventKind] = EventKind.DISPUTE
    dispute_id: str
    product_id: str
    brand_id: str
    disputed_at: datetime
    reason: str | None = None
    dispute_count: int = 1

    @property
    def event_id(self) -> str:
        return f"dispute:{self.product_id}:{self.dispute_id}"

    @property
    def occurred_at(self) -> datetime:
        return self.disputed_at

    def payload(self) -> dict[str, Any]:
        return {
            "disputeId": self.dispute_id,
            "productId": self.product_id,
            "brandId": self.brand_id,
            "disputedAt": format_datetime(self.disputed_at),
            "reason": self.reason,
            "disputeCount": self.dispute_count,
        }

    @classmethod
    def from_payload(cls, data: Mapping[str, Any]) -> DisputeEvent:
        return cls(
            data["disputeId"],
            data["productId"],
            data["brandId"],
            parse_datetime(data["disputedAt"]),
            data.get("reason"),
            int(data.get("disputeCount", 1)),
        )


@dataclass(frozen=True, slots=True)
class AppendEvent:
    """A provenance event appended after ``previous_occurred_at`` (None for the first)."""

    kind: ClassVar[EventKind] = EventKind.APPEND
    product_id: str
    brand_id: str
    sequence: int
    occurred_at: datetime
    previous_occurred_at: datetime | None
    country: str | None = None
    city: str | None = None

    @property
    def event_id(self) -> str:
        return f"event:{self.product_id}:{self.sequence}"

    def payload(self) -> dict[str, Any]:
        return {
            "productId": self.product_id,
            "brandId": self.brand_id,
            "sequence": self.sequence,
            "occurredAt": format_datetime(self.occurred_at),
            "previousOccurredAt": _time(self.previous_occurred_at),
            "country": self.country,
            "city": self.city,
        }

    @classmethod
    def from_payload(cls, data: Mapping[str, Any]) -> AppendEvent:
        return cls(
            data["productId"],
            data["brandId"],
            int(data["sequence"]),
            parse_datetime(data["occurredAt"]),
            _parse(data.get("previousOccurredAt")),
            data.get("country"),
            data.get("city"),
        )


@dataclass(frozen=True, slots=True)
class WebhookEvent:
    """One delivery of one alert to one webhook; retries reuse the delivery id,
    so a receiver can drop a repeat it already acted on."""

    kind: ClassVar[EventKind] = EventKind.WEBHOOK
    delivery_id: str
    webhook_id: str
    brand_id: str
    alert_id: str
    created_at: datetime

    @property
    def event_id(self) -> str:
        return f"webhook:{self.delivery_id}"

    @property
    def occurred_at(self) -> datetime:
        return self.created_at

    def payload(self) -> dict[str, Any]:
        return {
            "deliveryId": self.delivery_id,
            "webhookId": self.webhook_id,
            "brandId": self.brand_id,
            "alertId": self.alert_id,
            "createdAt": format_datetime(self.created_at),
        }

    @classmethod
    def from_payload(cls, data: Mapping[str, Any]) -> WebhookEvent:
        return cls(
            data["deliveryId"],
            data["webhookId"],
            data["brandId"],
            data["alertId"],
            parse_datetime(data["createdAt"]),
        )


OutboxEvent: TypeAlias = ScanEvent | RecallEvent | DisputeEvent | AppendEvent | WebhookEvent

_KINDS: dict[EventKind, Any] = {
    EventKind.SCAN: ScanEvent,
    EventKind.RECALL: RecallEvent,
    EventKind.DISPUTE: DisputeEvent,
    EventKind.APPEND: AppendEvent,
    EventKind.WEBHOOK: WebhookEvent,
}


def event_from_payload(kind: str, payload: Mapping[str, Any]) -> OutboxEvent:
    try:
        event: OutboxEvent = _KINDS[EventKind(kind)].from_payload(payload)
    except (KeyError, ValueError, TypeError, BadUserInput) as error:
        raise ProofgateError(
            f"Outbox item of kind {kind!r} has a malformed payload: {error!r}"
        ) from None
    return event
