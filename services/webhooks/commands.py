"""registerWebhook and deleteWebhook (a BRAND key of the brand)."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from domain.enums import Severity, ThreatType
from domain.errors import BadUserInput, ConditionFailed, NotFound
from domain.hosts import public_address_problem, validate_webhook_url
from domain.identifiers import new_id, new_webhook_secret
from domain.threats.filters import AlertFilter
from domain.validation import validate_id
from storage import Delete, Item, ItemExists
from storage.access_patterns import BRAND_WEBHOOKS, WEBHOOK_BY_ID

from ..audit.items import audit_entry
from ..context import CommandContext
from ..pipeline.settings import PipelineSettings
from ..threats.filters import check_products
from ..transact import transact
from .items import WebhookRef, parse_webhook_id, webhook_item
from .selections import SELECTION_MAX_BYTES

__all__ = ["RegisteredWebhook", "delete_webhook", "register_webhook"]


@dataclass(frozen=True)
class RegisteredWebhook:
    item: Item
    secret: str
    """Returned once: deliveries are signed with it."""


def _check_target(url: str, allow_private: bool) -> None:
    """Literal private addresses are refused here; names are checked again
    when a delivery resolves them."""
    host = urlsplit(url).hostname or ""
    if allow_private:
        return
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        if host == "localhost" or host.endswith(".localhost"):
            raise BadUserInput("url: localhost is not a webhook target") from None
        return
    problem = public_address_problem(str(address))
    if problem is not None:
        raise BadUserInput(
            f"url: {problem} is not a webhook target",
            hint="Use a public host name or a public unicast address.",
        )


def _check_document(context: CommandContext, brand_id: str, document: str) -> None:
    selections = context.services.selections
    if selections is None:
        raise BadUserInput("document: this gateway does not run webhook documents")
    if len(document.encode("utf-8", "surrogatepass")) > SELECTION_MAX_BYTES:
        raise BadUserInput(
            f"document: at most {SELECTION_MAX_BYTES:,} bytes",
            hint="Select fewer fields; fragments count too.",
        )
    selections.check(document, brand_id, context.principal)


async def register_webhook(
    context: CommandContext,
    brand_id: str,
    url: str,
    min_severity: Severity,
    types: Sequence[ThreatType] | None,
    alert_filter: AlertFilter | None = None,
    legacy_signature: bool = True,
    document: str | None = None,
) -> RegisteredWebhook:
    """``alert_filter`` has passed ``build_filter`` (at most
    ``WEBHOOK_MAX_PRODUCT_IDS`` products); its products are checked here."""
    brand = validate_id(brand_id, field="brandId")
    context.principal.require_write(brand)
    pipeline = context.services.pipeline
    settings = pipeline.settings if pipeline is not None else PipelineSettings()
    target = validate_webhook_url(url)
    _check_target(target, settings.webhook_allow_private)
    if types is not None and not types:
        raise BadUserInput("types: send null for every type, or at least one type")
    if document is not None:
        _check_document(context, brand, document)
    if alert_filter is not None:
        await check_products(context.storage, brand, alert_filter)
    existing = await context.loaders.page(
        BRAND_WEBHOOKS, {"brand_id": brand}, first=BRAND_WEBHOOKS.max_page
    )
    if len(existing) >= settings.webhooks_per_brand:
        raise BadUserInput(
            f"A brand has at most {settings.webhooks_per_brand} webhooks",
            hint="Delete one first, or point several alert types at one URL.",
        )
    now = context.now()
    ref = WebhookRef(brand, new_id(now))
    secret = new_webhook_secret()
    put = webhook_item(
        ref,
        url=target,
        secret=secret,
        min_severity=min_severity,
        types=types,
        created_at=now,
        alert_filter=alert_filter,
        legacy_signature=legacy_signature,
        document=document,
    )
    await transact(
        context.storage,
        [
            put,
            audit_entry(
                context.principal, "registerWebhook", now, brand_id=brand, target_ids=[ref.id]
            ),
        ],
    )
    return RegisteredWebhook(put.item, secret)


async def delete_webhook(context: CommandContext, webhook_id: str) -> Item:
    """The webhook as it was."""
    ref = parse_webhook_id(webhook_id)
    context.principal.require_write(ref.brand_id, "Webhook")
    item = await context.loaders.item(WEBHOOK_BY_ID, **ref.params)
    if item is None:
        raise NotFound("Webhook not found")
    now = context.now()
    try:
        await transact(
            context.storage,
            [
                Delete(WEBHOOK_BY_ID.key(**ref.params), ItemExists()),
                audit_entry(
                    context.principal,
                    "deleteWebhook",
                    now,
                    brand_id=ref.brand_id,
                    target_ids=[ref.id],
                ),
            ],
        )
    except ConditionFailed:
        raise NotFound("Webhook not found") from None
    context.loaders.forget(WEBHOOK_BY_ID, **ref.params)
    return item
