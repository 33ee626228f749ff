"""registerWebhook and deleteWebhook (``services.webhooks.commands``)."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

import strawberry

from domain.enums import Severity, ThreatType
from services.threats.filters import WEBHOOK_MAX_PRODUCT_IDS
from services.webhooks import commands, signing
from storage.access_patterns import BRAND_WEBHOOKS, WEBHOOK_BY_ID

from ..context import Info
from ..fields import mutation_field
from ..threats.inputs import AlertFilterInput
from .types import RegisterWebhookPayload, RotateWebhookSecretPayload, Webhook

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
        legacy_signature: Annotated[
            bool,
            strawberry.argument(
                description="Also send X-Proofgate-Signature beside the Standard Webhooks "
                "headers, for receivers written against it"
            ),
        ] = True,
        document: Annotated[
            str | None,
            strawberry.argument(
                description="A subscription on threatAlerts of this brand (its brandId the "
                "brand's id or the operation's one variable); each delivery's body carries its "
                "result for the alert as `data` instead of the fixed `alert`"
            ),
        ] = None,
    ) -> RegisterWebhookPayload:
        asked = None if filter is None else filter.unchecked(WEBHOOK_MAX_PRODUCT_IDS)
        registered = await commands.register_webhook(
            info.context, brand_id, url, min_severity, types, asked, legacy_signature, document
        )
        return RegisterWebhookPayload(
            webhook=Webhook.from_item(registered.item), secret=registered.secret
        )

    @mutation_field(
        reads=WEBHOOK_BY_ID,
        description="A new signing secret, returned once; the current one also signs "
        "deliveries for keepPreviousSeconds (at most 7 days), so receivers can switch over",
    )
    async def rotate_webhook_secret(
        self,
        info: Info,
        id: strawberry.ID,
        keep_previous_seconds: int = int(signing.ROTATION_WINDOW_DEFAULT.total_seconds()),
    ) -> RotateWebhookSecretPayload:
        rotated = await signing.rotate_webhook_secret(
            info.context, id, timedelta(seconds=keep_previous_seconds)
        )
        return RotateWebhookSecretPayload(
            webhook=Webhook.from_item(rotated.item), secret=rotated.secret
        )

    @mutation_field(
        reads=WEBHOOK_BY_ID,
        description="Whether deliveries still carry X-Proofgate-Signature; false once every "
        "receiver verifies the Standard Webhooks headers",
    )
    async def set_webhook_legacy_signature(
        self, info: Info, id: strawberry.ID, enabled: bool
    ) -> Webhook:
        return Webhook.from_item(await signing.set_legacy_signature(info.context, id, enabled))

    @mutation_field(
        reads=WEBHOOK_BY_ID, description="Stop deliveries to a webhook; returns it as it was"
    )
    async def delete_webhook(self, info: Info, id: strawberry.ID) -> Webhook:
        return Webhook.from_item(await commands.delete_webhook(info.context, id))
