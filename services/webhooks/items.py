"""How webhooks and their deliveries are stored.

- ``BRAND#<brand>`` / ``WEBHOOK#<id>``: a webhook (AP23 lists a brand's, AP24
  reads one). It keeps the signing secret, which the API shows only once,
  and after a rotation the previous secret until ``previousSecretUntil``;
  ``legacySignature`` (absent: true) says whether deliveries still carry
  ``X-Proofgate-Signature``.
- ``DELIVERIES#<brand>`` / ``DELIVERY#<createdAt>#<delivery id>``: one delivery
  of one alert to one webhook and its status (AP25, newest first). It is
  created with the alert, in the same transaction as the outbox item that
  performs it, and expires after the retention period.

A webhook's public id, ``wh_<brand>_<id>``, names its brand, so deleting by id
needs no lookup and a foreign id is refused before any read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, ClassVar, TypeVar

from domain.datetimes import format_datetime, parse_datetime
from domain.enums import Severity, ThreatType
from domain.threats.filters import AlertFilter
from storage import (
    Compare,
    Comparison,
    Item,
    ItemAbsent,
    ItemExists,
    Key,
    KeyTemplate,
    Put,
    Update,
)
from storage.access_patterns import WEBHOOK_BY_ID, WEBHOOK_DELIVERIES

from ..brand_scoped import BrandScopedRef

__all__ = [
    "DeliveryStatus",
    "WebhookRef",
    "delivery_item",
    "delivery_key",
    "delivery_update",
    "legacy_signature_update",
    "parse_webhook_id",
    "rotation_update",
    "signing_secrets",
    "webhook_filter",
    "webhook_id",
    "webhook_item",
]

WEBHOOK_ID_PREFIX = "wh_"
DELIVERY_SORT = KeyTemplate("DELIVERY#{created_at:time}#{delivery_id}")


class DeliveryStatus(StrEnum):
    PENDING = "PENDING"
    RETRYING = "RETRYING"
    DELIVERED = "DELIVERED"
    FAILED = "FAILED"


@dataclass(frozen=True, slots=True)
class WebhookRef(BrandScopedRef):
    prefix: ClassVar[str] = WEBHOOK_ID_PREFIX
    param: ClassVar[str] = "webhook_id"
    type_name: ClassVar[str] = "Webhook"


def webhook_id(brand_id: str, local_id: str) -> str:
    return WebhookRef(brand_id, local_id).id


def parse_webhook_id(text: str) -> WebhookRef:
    return WebhookRef.parse(text)


def webhook_item(
    ref: WebhookRef,
    *,
    url: str,
    secret: str,
    min_severity: Severity,
    types: Sequence[ThreatType] | None,
    created_at: datetime,
    alert_filter: AlertFilter | None = None,
    legacy_signature: bool = True,
    document: str | None = None,
) -> Put:
    """``alert_filter``'s product ids, countries and severities are kept
    beside ``minSeverity`` and ``types``; an alert must match all of them."""
    key = WEBHOOK_BY_ID.key(**ref.params)
    item: Item = {
        "PK": key.pk,
        "SK": key.sk,
        "entity": "Webhook",
        "id": ref.id,
        "brandId": ref.brand_id,
        "url": url,
        "secret": secret,
        "minSeverity": min_severity.value,
        "types": None if types is None else sorted({t.value for t in types}),
        "createdAt": format_datetime(created_at),
        "legacySignature": legacy_signature,
    }
    if document is not None:
        item["document"] = document
    if alert_filter is not None:
        for name, values in (
            ("productIds", alert_filter.product_ids),
            ("countries", alert_filter.countries),
            ("filterTypes", alert_filter.types),
            ("severities", alert_filter.severities),
        ):
            if values is not None:
                item[name] = sorted(str(v) for v in values)
    return Put(item, ItemAbsent())


def _values(item: Item, name: str) -> frozenset[str] | None:
    values = item.get(name)
    return None if values is None else frozenset(values)


_E = TypeVar("_E", ThreatType, Severity)


def _enums(enum: type[_E], values: list[str] | None) -> frozenset[_E] | None:
    return None if values is None else frozenset(enum(v) for v in values)


def webhook_filter(webhook: Item) -> AlertFilter:
    """Everything the webhook's item says an alert must match. A brand has at
    most ``webhooks_per_brand`` (10) webhooks, each checked with a few set
    lookups: the relay needs no index for them (docs/design.md, Alert filters)."""
    minimum = Severity(webhook["minSeverity"])
    stated = AlertFilter(
        product_ids=_values(webhook, "productIds"),
        countries=_values(webhook, "countries"),
        types=_enums(ThreatType, webhook.get("filterTypes")),
        severities=_enums(Severity, webhook.get("severities")),
    )
    return stated.both(
        AlertFilter(
            types=_enums(ThreatType, webhook.get("types")),
            severities=frozenset(s for s in Severity if s.at_least(minimum)),
        )
    )


def signing_secrets(webhook: Item, now: datetime) -> list[str]:
    """The secrets a delivery at ``now`` is signed with: the current one, and
    the previous one while its rotation window lasts."""
    secrets = [webhook["secret"]]
    until = webhook.get("previousSecretUntil")
    if webhook.get("previousSecret") and until is not None and now < parse_datetime(until):
        secrets.append(webhook["previousSecret"])
    return secrets


def rotation_update(webhook: Item, secret: str, *, now: datetime, keep: timedelta) -> Update:
    """The new secret; the current one stays valid for ``keep``. Conditional
    on the secret being the one read, so two rotations racing cannot leave a
    previous secret nobody was shown."""
    key = WEBHOOK_BY_ID.key(**parse_webhook_id(webhook["id"]).params)
    return Update(
        key,
        set={
            "secret": secret,
            "previousSecret": webhook["secret"],
            "previousSecretUntil": format_datetime(now + keep),
        },
        condition=Compare("secret", Comparison.EQ, webhook["secret"]),
    )


def legacy_signature_update(webhook_id: str, enabled: bool) -> Update:
    key = WEBHOOK_BY_ID.key(**parse_webhook_id(webhook_id).params)
    return Update(key, set={"legacySignature": enabled}, condition=ItemExists())


def delivery_key(brand_id: str, created_at: datetime, delivery_id: str) -> Key:
    return Key(
        WEBHOOK_DELIVERIES.partition({"brand_id": brand_id}),
        DELIVERY_SORT.format({"created_at": created_at, "delivery_id": delivery_id}),
    )


def delivery_item(
    *, delivery_id: str, webhook: Item, alert: Item, created_at: datetime, retention: timedelta
) -> Put:
    key = delivery_key(webhook["brandId"], created_at, delivery_id)
    item: Item = {
        "PK": key.pk,
        "SK": key.sk,
        "entity": "WebhookDelivery",
        "id": delivery_id,
        "webhookId": webhook["id"],
        "alertId": alert["id"],
        "url": webhook["url"],
        "status": DeliveryStatus.PENDING.value,
        "attempts": 0,
        "createdAt": format_datetime(created_at),
        "updatedAt": format_datetime(created_at),
        "expiresAt": int((created_at + retention).timestamp()),
    }
    return Put(item, ItemAbsent())


def delivery_update(
    key: Key,
    *,
    status: DeliveryStatus,
    now: datetime,
    status_code: int | None,
    error: str | None,
) -> Update:
    """Records one attempt; conditional so an expired record is not recreated."""
    values: dict[str, Any] = {
        "status": status.value,
        "updatedAt": format_datetime(now),
        "lastStatusCode": status_code,
        "lastError": error,
    }
    if status is DeliveryStatus.DELIVERED:
        values["deliveredAt"] = format_datetime(now)
    return Update(key, set=values, add={"attempts": 1}, condition=ItemExists())
