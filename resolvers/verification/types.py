"""The Verification type: the verdict on a code, as a consumer sees it."""

from __future__ import annotations

import strawberry

from services.verification.checks import Checks

from ..products.types import Product
from ..types.enums import ScanResult

__all__ = ["Verification"]


@strawberry.type(
    description="The verdict on a verification code. `claimed` says whether someone holds an "
    "active claim; `isClaimant` whether it is the device the scan names. Who the claimant "
    "is, is never revealed."
)
class Verification:
    authentic: bool
    result: ScanResult = strawberry.field(
        description="COUNTERFEIT when the certificate hash or signature fails; SUSPICIOUS for a "
        "recalled product, a broken provenance chain, or a scan of a claimed product from a "
        "device that is not the claimant's (the tag may be cloned; `warnings` says so); the "
        "claimant's own scans stay AUTHENTIC; UNKNOWN for an unknown code"
    )
    product: Product | None
    signature_valid: bool
    chain_intact: bool
    claimed: bool
    is_claimant: bool
    warnings: list[str]
    scan_count: int = strawberry.field(
        description="Verifications recorded for the product, this one included"
    )

    @classmethod
    def of(cls, checks: Checks, *, scan_count: int) -> Verification:
        return cls(
            authentic=checks.outcome.authentic,
            result=checks.outcome.result,
            product=Product.from_item(checks.product) if checks.product is not None else None,
            signature_valid=checks.signature_valid,
            chain_intact=checks.chain_intact,
            claimed=checks.claim is not None,
            is_claimant=checks.is_claimant,
            warnings=list(checks.outcome.warnings),
            scan_count=scan_count,
        )
