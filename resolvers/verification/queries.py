"""verification(code): the same verdict as verifyProduct, recording nothing."""

from __future__ import annotations

import strawberry

from domain.identifiers import hash_device_fingerprint
from domain.validation import DEVICE_FINGERPRINT
from services.verification.checks import run_checks
from storage.access_patterns import PRODUCT_BY_CODE, PRODUCT_BY_ID

from ..context import Info
from ..fields import ap_field
from .types import Verification

__all__ = ["VerificationQueries"]


@strawberry.type
class VerificationQueries:
    @ap_field(
        PRODUCT_BY_CODE,
        loads=PRODUCT_BY_ID,
        description="The verdict on a code without recording a scan (public). "
        "Pass deviceFingerprint to learn whether that device holds the claim.",
    )
    async def verification(
        self, info: Info, code: str, device_fingerprint: str | None = None
    ) -> Verification:
        context = info.context
        fingerprint = DEVICE_FINGERPRINT.optional(device_fingerprint, field="deviceFingerprint")
        device_hash = (
            hash_device_fingerprint(context.services.hash_salt, fingerprint)
            if fingerprint
            else None
        )
        checks = await run_checks(context, code, device_hash, shared=True)
        scan_count = int(checks.product.get("scanCount", 0)) if checks.product is not None else 0
        return Verification.of(checks, scan_count=scan_count)
