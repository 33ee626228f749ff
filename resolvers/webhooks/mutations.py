"""registerWebhook and deleteWebhook (a BRAND key of the brand)."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

import strawberry

from domain.enums import Severity, ThreatType
from domain.errors import BadUserInput, ConditionFailed, NotFound
from domain.hosts import public_address_problem, validate_webhook_url
from domain.identifiers import new_id, new_webhook_secret
from domain.validation import validate_id
from storage import Delete, ItemExists
from storage.access_patterns import BRAND_WEBHOOKS, WEBHOOK_BY_ID

from ..audit.items import audit_entry
from ..context import Info
from ..fields import mutation_field
from ..pipeline.settings import PipelineSettings
from ..transact import transact
from .items import WebhookRef, parse_webhook_id, webhook_item
from .types import RegisterWebhookPayload, Webhook

__all__ = ["WebhookMutations"]


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


@strawberry.type
class WebhookMutations:
    @mutation_field(
        reads=BRAND_WEBHOOKS,
        description="POST the brand's alerts of at least minSeverity (and of the given types, "
        "if any) to url. The signing secret is returned once.",
    )
    async def register_webhook(
        self,
        info: Info,
        brand_id: strawberry.ID,
        url: str,
        min_severity: Severity = Severity.LOW,
        types: list[ThreatType] | None = None,
    ) -> RegisterWebhookPayload:
        context = info.context
        brand = validate_id(brand_id, field="brandId")
        context.principal.require_write(brand)
        pipeline = context.services.pipeline
        settings = pipeline.settings if pipeline is not None else PipelineSettings()
        target = validate_webhook_url(url)
        _check_target(target, settings.webhook_allow_private)
        if types is not None and not types:
            raise BadUserInput("types: send null for every type, or at least one type")
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
            ref, url=target, secret=secret, min_severity=min_severity, types=types, created_at=now
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
        return RegisterWebhookPayload(webhook=Webhook.from_item(put.item), secret=secret)

    @mutation_field(
        reads=WEBHOOK_BY_ID, description="Stop deliveries to a webhook; returns it as it was"
    )
    async def delete_webhook(self, info: Info, id: strawberry.ID) -> Webhook:
        context = info.context
        ref = parse_webhook_id(id)
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
        return Webhook.from_item(item)
