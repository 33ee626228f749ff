"""claimProduct and disputeClaim: public, anonymous consumers.

A product has one active claim. The claim is a conditional create (absent, or
the stored claim has expired), so of concurrent claims exactly one wins and
the rest are CONFLICT. The claimant is recorded only as the salted hash of
their device fingerprint and is never revealed, not even to the brand.
"""

from __future__ import annotations

import hmac

import strawberry

from domain.datetimes import format_datetime
from domain.errors import BadUserInput, ConditionFailed, Conflict, NotFound
from domain.identifiers import hash_device_fingerprint, new_id
from domain.validation import DEVICE_FINGERPRINT, REASON
from storage import All, Any_, Compare, Comparison, Item, ItemAbsent, Put, Update
from storage.access_patterns import PRODUCT_BY_CODE, PRODUCT_CLAIM

from ..audit.items import audit_entry
from ..context import Info, RequestContext
from ..fields import mutation_field
from ..pipeline_hook import ClaimDisputed, pipeline_hook
from ..transact import transact
from ..verification.lookup import product_for_code
from .items import claim_is_active, claim_item, dispute_item, epoch_seconds
from .types import Claim

__all__ = ["ClaimMutations"]

_NO_CLAIM = "This product has no active claim to dispute"


async def _product(context: RequestContext, code: str) -> Item:
    product = await product_for_code(context.loaders, code)
    if product is None:
        raise NotFound("No product has this verification code")
    return product


@strawberry.type
class ClaimMutations:
    @mutation_field(
        reads=PRODUCT_BY_CODE,
        description="Claim ownership of a product (public). One active claim per product; "
        "it expires after the configured time. A claimed product is CONFLICT.",
    )
    async def claim_product(self, info: Info, code: str, device_fingerprint: str) -> Claim:
        context = info.context
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
        return Claim.from_item(item)

    @mutation_field(
        reads=PRODUCT_BY_CODE,
        description="Dispute the active claim of a product (public). Raises an "
        "OWNERSHIP_DISPUTE threat for the brand; with no active claim it is BAD_USER_INPUT.",
    )
    async def dispute_claim(
        self, info: Info, code: str, device_fingerprint: str, reason: str
    ) -> Claim:
        context = info.context
        fingerprint = DEVICE_FINGERPRINT(device_fingerprint, field="deviceFingerprint")
        why = REASON(reason, field="reason")
        product = await _product(context, code)
        product_id: str = product["id"]
        brand_id: str = product["brandId"]
        claim = await context.loaders.item(PRODUCT_CLAIM, product_id=product_id)
        now = context.now()
        if claim is None or not claim_is_active(claim, now):
            raise BadUserInput(_NO_CLAIM, hint="Only a claimed product can be disputed.")
        device_hash = hash_device_fingerprint(context.services.hash_salt, fingerprint)
        if hmac.compare_digest(str(claim.get("deviceHash", "")), device_hash):
            raise BadUserInput("A claimant cannot dispute their own claim")
        count = int(claim.get("disputeCount", 0)) + 1
        dispute_id = new_id(now)
        signal = ClaimDisputed(dispute_id, brand_id, product_id, now, why, count)
        dispute = dispute_item(
            dispute_id=dispute_id,
            product_id=product_id,
            brand_id=brand_id,
            disputed_at=now,
            device_hash=device_hash,
            reason=why,
            claimed_at=claim["claimedAt"],
        )
        # Bound to the claim that was read, so a dispute never lands on a newer claimant.
        same_claim = All(
            Compare("claimedAt", Comparison.EQ, claim["claimedAt"]),
            Compare("expiresAt", Comparison.GT, epoch_seconds(now)),
        )
        try:
            await transact(
                context.storage,
                [
                    Put(dispute, ItemAbsent()),
                    Update(
                        PRODUCT_CLAIM.key(product_id=product_id),
                        add={"disputeCount": 1},
                        set={"lastDisputedAt": format_datetime(now)},
                        condition=same_claim,
                    ),
                    audit_entry(
                        context.principal,
                        "disputeClaim",
                        now,
                        brand_id=brand_id,
                        target_ids=[product_id],
                    ),
                    *pipeline_hook(signal, context.services),
                ],
            )
        except ConditionFailed as error:
            if error.index != 1:
                raise
            raise BadUserInput(
                _NO_CLAIM, hint="The claim expired or was replaced; verify the product again."
            ) from None
        updated = {**claim, "disputeCount": count, "lastDisputedAt": format_datetime(now)}
        context.loaders.prime(PRODUCT_CLAIM, updated, product_id=product_id)
        return Claim.from_item(updated)
