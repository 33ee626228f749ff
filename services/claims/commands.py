"""claimProduct and disputeClaim: public, anonymous consumers.

A product has one active claim. The claim is a conditional create (absent, or
the stored claim has expired), so of concurrent claims exactly one wins and
the rest are CONFLICT. The claimant is recorded only as the salted hash of
their device fingerprint and is never revealed, not even to the brand.
"""

from __future__ import annotations

import hmac
from datetime import datetime

from domain.datetimes import format_datetime
from domain.errors import BadUserInput, ConditionFailed, Conflict, NotFound
from domain.identifiers import hash_device_fingerprint, new_id
from domain.validation import DEVICE_FINGERPRINT, REASON
from storage import All, Any_, Compare, Comparison, Item, ItemAbsent, Put, Update, WriteAction
from storage.access_patterns import PRODUCT_CLAIM

from ..audit.items import audit_entry
from ..context import CommandContext
from ..pipeline.events import DisputeEvent
from ..transact import transact
from ..verification.lookup import product_for_code
from .items import claim_is_active, claim_item, dispute_item, epoch_seconds

__all__ = ["claim_product", "dispute_claim"]

_NO_CLAIM = "This product has no active claim to dispute"


async def _product(context: CommandContext, code: str) -> Item:
    product = await product_for_code(context.loaders, code)
    if product is None:
        raise NotFound("No product has this verification code")
    return product


async def claim_product(context: CommandContext, code: str, device_fingerprint: str) -> Item:
    """The new claim item."""
    fingerprint = DEVICE_FINGERPRINT(device_fingerprint, field="deviceFingerprint")
    product = await _product(context, code)
    now = context.now()
    product_id: str = product["id"]
    item = claim_item(
        product_id=product_id,
        brand_id=product["brandId"],
        device_hash=hash_device_fingerprint(context.services.hash_salt, fingerprint),
        claimed_at=now,
        expires_at=epoch_seconds(now + context.services.claim_ttl),
    )
    expired = Compare("expiresAt", Comparison.LE, epoch_seconds(now))
    try:
        await transact(
            context.storage,
            [
                Put(item, Any_(ItemAbsent(), expired)),
                audit_entry(
                    context.principal,
                    "claimProduct",
                    now,
                    brand_id=product["brandId"],
                    target_ids=[product_id],
                ),
            ],
        )
    except ConditionFailed as error:
        if error.index != 0:
            raise
        raise Conflict(
            "This product is already claimed",
            hint="If you own it, dispute the claim with disputeClaim.",
        ) from None
    context.loaders.prime(PRODUCT_CLAIM, item, product_id=product_id)
    return item


async def _disputed_claim(
    context: CommandContext, product_id: str, device_hash: str, now: datetime
) -> Item:
    """The active claim a dispute is about; never the disputer's own."""
    claim = await context.loaders.item(PRODUCT_CLAIM, product_id=product_id)
    if claim is None or not claim_is_active(claim, now):
        raise BadUserInput(_NO_CLAIM, hint="Only a claimed product can be disputed.")
    if hmac.compare_digest(str(claim.get("deviceHash", "")), device_hash):
        raise BadUserInput("A claimant cannot dispute their own claim")
    return claim


def _dispute_actions(
    context: CommandContext, claim: Item, event: DisputeEvent, device_hash: str, reason: str
) -> list[WriteAction]:
    now, product_id = event.disputed_at, event.product_id
    dispute = dispute_item(
        dispute_id=event.dispute_id,
        product_id=product_id,
        brand_id=event.brand_id,
        disputed_at=now,
        device_hash=device_hash,
        reason=reason,
        claimed_at=claim["claimedAt"],
    )
    # Bound to the claim that was read, so a dispute never lands on a newer claimant.
    same_claim = All(
        Compare("claimedAt", Comparison.EQ, claim["claimedAt"]),
        Compare("expiresAt", Comparison.GT, epoch_seconds(now)),
    )
    return [
        Put(dispute, ItemAbsent()),
        Update(
            PRODUCT_CLAIM.key(product_id=product_id),
            add={"disputeCount": 1},
            set={"lastDisputedAt": format_datetime(now)},
            condition=same_claim,
        ),
        audit_entry(
            context.principal, "disputeClaim", now, brand_id=event.brand_id, target_ids=[product_id]
        ),
        *context.services.enqueue(event),
    ]


async def dispute_claim(
    context: CommandContext, code: str, device_fingerprint: str, reason: str
) -> Item:
    """The disputed claim as the dispute left it."""
    fingerprint = DEVICE_FINGERPRINT(device_fingerprint, field="deviceFingerprint")
    why = REASON(reason, field="reason")
    product = await _product(context, code)
    product_id: str = product["id"]
    now = context.now()
    device_hash = hash_device_fingerprint(context.services.hash_salt, fingerprint)
    claim = await _disputed_claim(context, product_id, device_hash, now)
    count = int(claim.get("disputeCount", 0)) + 1
    event = DisputeEvent(new_id(now), product_id, product["brandId"], now, why, count)
    try:
        await transact(context.storage, _dispute_actions(context, claim, event, device_hash, why))
    except ConditionFailed as error:
        if error.index != 1:
            raise
        raise BadUserInput(
            _NO_CLAIM, hint="The claim expired or was replaced; verify the product again."
        ) from None
    updated = {**claim, "disputeCount": count, "lastDisputedAt": format_datetime(now)}
    context.loaders.prime(PRODUCT_CLAIM, updated, product_id=product_id)
    return updated
