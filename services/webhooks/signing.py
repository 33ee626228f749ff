"""rotateWebhookSecret and setWebhookLegacySignature (a BRAND key of the
webhook's brand): how deliveries are signed
(docs/design.md, Webhook signatures)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from domain.errors import BadUserInput, ConditionFailed, Conflict, NotFound
from domain.identifiers import new_webhook_secret
from storage import Item
from storage.access_patterns import WEBHOOK_BY_ID

from ..audit.items import audit_entry
from ..context import CommandContext
from ..transact import transact
from .items import legacy_signature_update, parse_webhook_id, rotation_update

__all__ = [
    "ROTATION_WINDOW_DEFAULT",
    "ROTATION_WINDOW_MAX",
    "RotatedSecret",
    "rotate_webhook_secret",
    "set_legacy_signature",
]

ROTATION_WINDOW_DEFAULT = timedelta(days=1)
ROTATION_WINDOW_MAX = timedelta(days=7)
"""How long a rotated-out secret may stay valid: long enough to roll a
receiver's configuration out, short enough that a leaked secret dies."""


@dataclass(frozen=True)
class RotatedSecret:
    item: Item
    secret: str
    """Returned once, as at registration."""


async def _webhook(context: CommandContext, webhook_id: str) -> Item:
    ref = parse_webhook_id(webhook_id)
    context.principal.require_write(ref.brand_id, "Webhook")
    return await _read(context, webhook_id)


async def _read(context: CommandContext, webhook_id: str) -> Item:
    """The webhook as stored now, not as this request's loader last saw it."""
    params = parse_webhook_id(webhook_id).params
    context.loaders.forget(WEBHOOK_BY_ID, **params)
    item = await context.loaders.item(WEBHOOK_BY_ID, **params)
    if item is None:
        raise NotFound("Webhook not found")
    return item


async def rotate_webhook_secret(
    context: CommandContext, webhook_id: str, keep_previous: timedelta
) -> RotatedSecret:
    """A new secret signs every delivery from now on; the current one also
    signs them for ``keep_previous`` (zero: not at all). A second rotation
    within the window drops the oldest secret."""
    if not timedelta(0) <= keep_previous <= ROTATION_WINDOW_MAX:
        raise BadUserInput(
            f"keepPreviousSeconds: between 0 and {int(ROTATION_WINDOW_MAX.total_seconds())}",
            hint="Keep the old secret as long as rolling the new one out to receivers takes.",
        )
    webhook = await _webhook(context, webhook_id)
    now = context.now()
    secret = new_webhook_secret()
    try:
        await transact(
            context.storage,
            [
                rotation_update(webhook, secret, now=now, keep=keep_previous),
                audit_entry(
                    context.principal,
                    "rotateWebhookSecret",
                    now,
                    brand_id=webhook["brandId"],
                    target_ids=[webhook["id"]],
                ),
            ],
        )
    except ConditionFailed:
        raise Conflict(
            "The webhook's secret changed while it was being rotated",
            hint="Read the webhook again and rotate once more if you still need to.",
        ) from None
    return RotatedSecret(await _read(context, webhook_id), secret)


async def set_legacy_signature(context: CommandContext, webhook_id: str, enabled: bool) -> Item:
    """Whether deliveries still carry ``X-Proofgate-Signature`` beside the
    Standard Webhooks headers."""
    webhook = await _webhook(context, webhook_id)
    now = context.now()
    try:
        await transact(
            context.storage,
            [
                legacy_signature_update(webhook["id"], enabled),
                audit_entry(
                    context.principal,
                    "setWebhookLegacySignature",
                    now,
                    brand_id=webhook["brandId"],
                    target_ids=[webhook["id"]],
                ),
            ],
        )
    except ConditionFailed:
        raise NotFound("Webhook not found") from None
    return await _read(context, webhook_id)
