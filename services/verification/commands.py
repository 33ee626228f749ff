"""verifyProduct: public, and the one verification that records a scan."""

from __future__ import annotations

from dataclasses import dataclass

from domain.identifiers import hash_device_fingerprint, hash_ip

from ..context import CommandContext
from ..transact import transact
from .checks import Checks, run_checks
from .drafts import ScanDraft, ScanFields
from .record import scan_actions

__all__ = ["Verified", "verify_product"]


@dataclass(frozen=True)
class Verified:
    checks: Checks
    scan_count: int
    """The product's scans including this one; 0 for an unknown code."""


async def verify_product(
    context: CommandContext, code: str, scan: ScanFields | None, client_ip: str | None
) -> Verified:
    """An unknown code records nothing and is no error."""
    draft = ScanDraft.validate(scan)
    salt = context.services.hash_salt
    device_hash = (
        hash_device_fingerprint(salt, draft.device_fingerprint)
        if draft.device_fingerprint
        else None
    )
    checks = await run_checks(context, code, device_hash)
    if checks.product is None:
        return Verified(checks, scan_count=0)
    actions = scan_actions(
        context.services,
        checks,
        draft,
        now=context.now(),
        device_hash=device_hash,
        ip_hash=hash_ip(salt, client_ip) if client_ip else None,
    )
    await transact(context.storage, actions)
    return Verified(checks, scan_count=int(checks.product.get("scanCount", 0)) + 1)
