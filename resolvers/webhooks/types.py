"""Webhook, WebhookDelivery and what registerWebhook returns."""

from __future__ import annotations

from datetime import datetime
from typing import TypeVar

import strawberry

from domain.datetimes import parse_datetime
from domain.enums import Severity, ThreatType
from services.webhooks.items import DeliveryStatus
from storage import Item

from ..node.types import Node
from ..types import enums as _enums  # noqa: F401  (registers the GraphQL enums)

__all__ = [
    "RegisterWebhookPayload",
    "RotateWebhookSecretPayload",
    "Webhook",
    "WebhookDelivery",
    "WebhookDeliveryStatus",
    "WebhookFilter",
]

WebhookDeliveryStatus = strawberry.enum(DeliveryStatus, name="WebhookDeliveryStatus")


def _time(value: str | None) -> datetime | None:
    return None if value is None else parse_datetime(value)


@strawberry.type(description="The alert filter a webhook was registered with; null: any")
class WebhookFilter:
    product_ids: list[strawberry.ID] | None
    countries: list[str] | None
    types: list[ThreatType] | None
    severities: list[Severity] | None


def _ids(values: list[str] | None) -> list[strawberry.ID] | None:
    return None if values is None else [strawberry.ID(v) for v in values]


_E = TypeVar("_E", ThreatType, Severity)


def _list(enum: type[_E], values: list[str] | None) -> list[_E] | None:
    return None if values is None else [enum(v) for v in values]


@strawberry.type(description="Where a brand's alerts are POSTed, signed with the webhook's secret")
class Webhook(Node):
    id: strawberry.ID
    url: str
    min_severity: Severity
    types: list[ThreatType] | None = strawberry.field(description="null: every type")
    created_at: datetime
    filter: WebhookFilter = strawberry.field(
        description="What else an alert must match to be sent (AND with minSeverity and types)"
    )
    legacy_signature: bool = strawberry.field(
        description="Whether deliveries also carry X-Proofgate-Signature"
    )
    previous_secret_expires_at: datetime | None = strawberry.field(
        description="After a rotation, until when the previous secret also signs deliveries"
    )
    document: str | None = strawberry.field(
        description="The subscription whose result each delivery carries; null: the fixed shape"
    )

    @classmethod
    def from_item(cls, item: Item) -> Webhook:
        types = item.get("types")
        return cls(
            id=strawberry.ID(item["id"]),
            url=item["url"],
            min_severity=Severity(item["minSeverity"]),
            types=None if types is None else [ThreatType(t) for t in types],
            created_at=parse_datetime(item["createdAt"]),
            filter=WebhookFilter(
                product_ids=_ids(item.get("productIds")),
                countries=item.get("countries"),
                types=_list(ThreatType, item.get("filterTypes")),
                severities=_list(Severity, item.get("severities")),
            ),
            legacy_signature=bool(item.get("legacySignature", True)),
            previous_secret_expires_at=_time(item.get("previousSecretUntil")),
            document=item.get("document"),
        )


@strawberry.type(
    description="One alert sent to one webhook. Retries reuse the id (the webhook-id and "
    "X-Proofgate-Delivery headers), so a receiver can ignore a delivery it already handled."
)
class WebhookDelivery:
    id: strawberry.ID
    webhook_id: strawberry.ID
    alert_id: strawberry.ID
    url: str
    status: DeliveryStatus
    attempts: int
    last_status_code: int | None
    last_error: str | None
    created_at: datetime
    updated_at: datetime
    delivered_at: datetime | None

    @classmethod
    def from_item(cls, item: Item) -> WebhookDelivery:
        code = item.get("lastStatusCode")
        return cls(
            id=strawberry.ID(item["id"]),
            webhook_id=strawberry.ID(item["webhookId"]),
            alert_id=strawberry.ID(item["alertId"]),
            url=item["url"],
            status=DeliveryStatus(item["status"]),
            attempts=int(item.get("attempts", 0)),
            last_status_code=None if code is None else int(code),
            last_error=item.get("lastError"),
            created_at=parse_datetime(item["createdAt"]),
            updated_at=parse_datetime(item["updatedAt"]),
            delivered_at=_time(item.get("deliveredAt")),
        )


_SECRET = (
    "Signs every delivery per Standard Webhooks (`whsec_` then the key in base64; headers "
    "webhook-id, webhook-timestamp, webhook-signature: v1,<base64 HMAC-SHA256 over "
    "`<id>.<timestamp>.<body>`>) and, unless turned off, X-Proofgate-Signature: "
    "t=<unix seconds>,v1=<hex HMAC-SHA256 keyed by the secret's text over `<t>.<body>`>. "
    "Shown once."
)


@strawberry.type
class RegisterWebhookPayload:
    webhook: Webhook
    secret: str = strawberry.field(description=_SECRET)


@strawberry.type
class RotateWebhookSecretPayload:
    webhook: Webhook
    secret: str = strawberry.field(description=_SECRET)
