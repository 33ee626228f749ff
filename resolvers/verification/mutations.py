"""verifyProduct: public, and the one verification that records a scan."""

from __future__ import annotations

from typing import Any

import strawberry

from domain.identifiers import hash_device_fingerprint, hash_ip
from services.transact import transact
from services.verification.checks import run_checks
from services.verification.drafts import ScanDraft
from services.verification.record import scan_actions
from storage.access_patterns import PRODUCT_BY_CODE

from ..context import Info
from ..fields import mutation_field
from .inputs import ScanInput
from .types import Verification

__all__ = ["VerificationMutations", "client_ip"]


def client_ip(request: Any) -> str | None:
    """The peer address. Forwarding headers are not trusted: any client could
    forge them, and the address is only ever stored as a salted hash."""
    client = getattr(request, "client", None)
    host = getattr(client, "host", None)
    return host if isinstance(host, str) and host else None


@strawberry.type
class VerificationMutations:
    @mutation_field(
        reads=PRODUCT_BY_CODE,
        description="Verify a product by its code and record the scan (public). An unknown "
        "code answers authentic: false and result UNKNOWN, records nothing and is no error.",
    )
    async def verify_product(
        self, info: Info, code: str, scan: ScanInput | None = None
    ) -> Verification:
        context = info.context
        draft = ScanDraft.validate(scan)
        salt = context.services.hash_salt
        device_hash = (
            hash_device_fingerprint(salt, draft.device_fingerprint)
            if draft.device_fingerprint
            else None
        )
        checks = await run_checks(context, code, device_hash)
        if checks.product is None:
            return Verification.of(checks, scan_count=0)
        ip = client_ip(context.request)
        actions = scan_actions(
            context.services,
            checks,
            draft,
            now=context.now(),
            device_hash=device_hash,
            ip_hash=hash_ip(salt, ip) if ip else None,
        )
        await transact(context.storage, actions)
        return Verification.of(checks, scan_count=int(checks.product.get("scanCount", 0)) + 1)
