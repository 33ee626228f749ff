"""Performing one webhook delivery: sign, POST, record the outcome.

The relay calls this for a WEBHOOK outbox item. A non-2xx answer or a network
failure raises, so the outbox retries the item with backoff; the delivery
record shows each attempt's status meanwhile, and FAILED once the outbox gives up.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from domain.datetimes import format_datetime
from domain.errors import ConditionFailed, ProofgateError, ServiceUnavailable
from domain.webhooks import (
    DELIVERY_HEADER,
    EVENT_HEADER,
    SIGNATURE_HEADER,
    signature_header,
    standard_headers,
)
from services.pipeline.alerts.records import params_from_id
from services.pipeline.events import WebhookEvent
from services.pipeline.settings import PipelineSettings
from services.pipeline.webhooks.http import post
from services.webhooks.items import (
    DeliveryStatus,
    delivery_key,
    delivery_update,
    parse_webhook_id,
    signing_secrets,
)
from services.webhooks.selections import WebhookSelections
from storage import Item, Storage
from storage.access_patterns import THREAT_BY_ID, WEBHOOK_BY_ID

__all__ = ["EVENT_TYPE", "NO_RESPONSE", "deliver", "delivery_body", "delivery_headers"]

logger = logging.getLogger("proofgate.pipeline")

EVENT_TYPE = "threat.alert"
NO_RESPONSE = "no HTTP response"
"""The brand-visible ``lastError`` of every failure short of an HTTP answer:
naming it (a name that does not resolve, an address that is private, a
refused connection) would let a brand probe DNS and the private network
through the gateway. The operator's log has the cause."""
_ALERT_FIELDS = (
    "id",
    "brandId",
    "productId",
    "type",
    "severity",
    "details",
    "country",
    "city",
    "detectedAt",
    "resolved",
)


def delivery_body(
    event: WebhookEvent, alert: Item, selected: dict[str, Any] | None = None
) -> bytes:
    """The fixed alert shape, or, for a webhook with a GraphQL document, its
    selection's result (``data`` and any ``errors``) in its place."""
    body: dict[str, Any] = {
        "id": event.delivery_id,
        "type": EVENT_TYPE,
        "webhookId": event.webhook_id,
        "createdAt": format_datetime(event.created_at),
    }
    if selected is None:
        body["alert"] = {name: alert.get(name) for name in _ALERT_FIELDS}
    else:
        body.update(selected)
    return json.dumps(body, separators=(",", ":"), default=str).encode()


async def _selected(
    webhook: Item, alert: Item, delivery_id: str, selections: WebhookSelections | None
) -> dict[str, Any] | None:
    if webhook.get("document") is None:
        return None
    if selections is None:
        raise ServiceUnavailable(
            f"Webhook delivery {delivery_id} needs a GraphQL document run, "
            "which this process cannot do"
        )
    return await selections.run(webhook, alert, delivery_id)


def delivery_headers(webhook: Item, delivery_id: str, body: bytes, now: datetime) -> dict[str, str]:
    """Standard Webhooks' three headers, with ``webhook-id`` the delivery id,
    so every retry of one delivery has the same id; then the older ones,
    unless the webhook opted out of ``X-Proofgate-Signature``
    (docs/design.md, Webhook signatures)."""
    secrets = signing_secrets(webhook, now)
    timestamp = int(now.timestamp())
    headers = standard_headers(secrets, delivery_id, timestamp, body)
    if webhook.get("legacySignature", True):
        headers[SIGNATURE_HEADER] = signature_header(secrets, timestamp, body)
    headers[DELIVERY_HEADER] = delivery_id
    headers[EVENT_HEADER] = EVENT_TYPE
    return headers


def _uncounted(status: DeliveryStatus) -> None:
    return None


async def _record(
    storage: Storage,
    event: WebhookEvent,
    status: DeliveryStatus,
    now: datetime,
    code: int | None,
    error: str | None,
    counted: Callable[[DeliveryStatus], None],
) -> None:
    counted(status)
    key = delivery_key(event.brand_id, event.created_at, event.delivery_id)
    try:
        await storage.transact_write(
            [delivery_update(key, status=status, now=now, status_code=code, error=error)]
        )
    except ConditionFailed:
        logger.info("Delivery record %s has expired; not recreating it", event.delivery_id)


async def deliver(
    storage: Storage,
    event: WebhookEvent,
    *,
    now: datetime,
    settings: PipelineSettings,
    final: bool,
    counted: Callable[[DeliveryStatus], None] = _uncounted,
    selections: WebhookSelections | None = None,
) -> None:
    """Returns when the delivery is done (delivered, or pointless because its
    webhook or alert is gone); raises when it should be retried. ``counted``
    hears each attempt's outcome, for metrics."""
    webhook = await storage.get(WEBHOOK_BY_ID, **parse_webhook_id(event.webhook_id).params)
    alert = await storage.get(THREAT_BY_ID, **params_from_id(event.alert_id))
    if webhook is None or alert is None:
        gone = "webhook was deleted" if webhook is None else "alert no longer exists"
        await _record(storage, event, DeliveryStatus.FAILED, now, None, gone, counted)
        return
    selected = await _selected(webhook, alert, event.delivery_id, selections)
    body = delivery_body(event, alert, selected)
    headers = delivery_headers(webhook, event.delivery_id, body, now)
    code: int | None = None
    try:
        response = await post(
            webhook["url"],
            body,
            headers,
            timeout=settings.webhook_timeout.total_seconds(),
            allow_private=settings.webhook_allow_private,
        )
        code = response.status
        error = None if response.ok else f"HTTP {response.status}"
    except (OSError, TimeoutError, ProofgateError) as failure:
        logger.info(
            "Webhook delivery %s got no response: %s: %s",
            event.delivery_id,
            type(failure).__name__,
            failure,
        )
        error = NO_RESPONSE
    if error is None:
        await _record(storage, event, DeliveryStatus.DELIVERED, now, code, None, counted)
        return
    status = DeliveryStatus.FAILED if final else DeliveryStatus.RETRYING
    await _record(storage, event, status, now, code, error, counted)
    raise ServiceUnavailable(f"Webhook delivery {event.delivery_id} failed: {error}")
