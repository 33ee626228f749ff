"""registerWebhook and deleteWebhook (``services.webhooks.commands``)."""

from __future__ import annotations

import strawberry

from domain.enums import Severity, ThreatType
from services.threats.filters import WEBHOOK_MAX_PRODUCT_IDS
from services.webhooks import commands
from storage.access_patterns import BRAND_WEBHOOKS, WEBHOOK_BY_ID

from ..context import Info
from ..fields import mutation_field
from ..threats.inputs import AlertFilterInput
from .types import RegisterWebhookPayload, Webhook

__all__ = ["WebhookMutations"]


@strawberry.type
class WebhookMutations:
    @mutation_field(
        reads=BRAND_WEBHOOKS,
        description="POST the brand's alerts of at least minSeverity (and of the given types, "
        "if any, and matching filter, if given) to url. The signing secret is returned once.",
    )
    async def register_webhook(
        self,
        info: Info,
        brand_id: strawberry.ID,
        url: str,
        min_severity: Severity = Severity.LOW,
        types: list[ThreatType] | None = None,
        filter: AlertFilterInput | None = None,
    ) -> RegisterWebhookPayload:
        asked = None if filter is None else filter.unchecked(WEBHOOK_MAX_PRODUCT_IDS)
        registered = await commands.register_webhook(
            info.context, brand_id, url, min_severity, types, asked
        )
        return RegisterWebhookPayload(
            webhook=Webhook.from_item(registered.item), secret=registered.secret
        )

    @mutation_field(
        reads=WEBHOOK_BY_ID, description="Stop deliveries to a webhook; returns it as it was"
    )
    async def delete_webhook(self, info: Info, id: strawberry.ID) -> Webhook:
        return Webhook.from_item(await commands.delete_webhook(info.context, id))
