"""The verdict of a verification, from the checks that were run.

Precedence: an unknown code is UNKNOWN; a certificate that does not match
(hash) or was not signed by a known key (signature) is COUNTERFEIT whatever
else holds; a recall, a broken provenance chain, or a scan of a claimed product
from a device that is not the claimant's makes a genuine product SUSPICIOUS;
otherwise it is AUTHENTIC (docs/design.md, "Verification").
"""

from __future__ import annotations

from dataclasses import dataclass

from .enums import ProductStatus, ScanResult

__all__ = ["WARNINGS", "Outcome", "assess"]

WARNINGS = {
    "hash": "The product record does not match its certificate.",
    "signature": "The certificate signature is not valid.",
    "recalled": "This product has been recalled by its brand.",
    "chain": "The provenance history has been altered or is incomplete.",
    "flagged": "This product is under investigation by its brand.",
    "claimed": "This product has been registered to another consumer. If you bought it new, "
    "it may be a counterfeit with a cloned tag.",
}


@dataclass(frozen=True)
class Outcome:
    authentic: bool
    result: ScanResult
    warnings: tuple[str, ...] = ()


def assess(
    *,
    found: bool,
    hash_valid: bool,
    signature_valid: bool,
    chain_intact: bool,
    status: ProductStatus | None,
    claimed_by_other: bool,
) -> Outcome:
    """Every check is required, so a forgotten one can never default to a pass.
    When ``found`` is false the others are ignored. ``claimed_by_other``: an
    active claim exists and the scanning device is not shown to hold it (no
    fingerprint counts as another device, as for the CLAIMED_PRODUCT_SCAN rule),
    because a genuine tag read by a stranger is what a cloned tag looks like."""
    if not found:
        return Outcome(False, ScanResult.UNKNOWN)
    if (
        hash_valid
        and signature_valid
        and chain_intact
        and not claimed_by_other
        and status is not ProductStatus.RECALLED
        and status is not ProductStatus.FLAGGED
    ):
        return _AUTHENTIC  # what _weigh answers when every check passes
    return _weigh(hash_valid, signature_valid, chain_intact, status, claimed_by_other)


_AUTHENTIC = Outcome(True, ScanResult.AUTHENTIC)
"""Nearly every verification's outcome: built once, as an Outcome is frozen."""


def _weigh(
    hash_valid: bool,
    signature_valid: bool,
    chain_intact: bool,
    status: ProductStatus | None,
    claimed_by_other: bool,
) -> Outcome:
    warnings = [
        WARNINGS[name]
        for name, failed in (
            ("hash", not hash_valid),
            ("signature", not signature_valid),
            ("recalled", status is ProductStatus.RECALLED),
            ("chain", not chain_intact),
            ("flagged", status is ProductStatus.FLAGGED),
            ("claimed", claimed_by_other),
        )
        if failed
    ]
    if not (hash_valid and signature_valid):
        result = ScanResult.COUNTERFEIT
    elif status is ProductStatus.RECALLED or not chain_intact or claimed_by_other:
        result = ScanResult.SUSPICIOUS
    else:
        result = ScanResult.AUTHENTIC
    return Outcome(result is ScanResult.AUTHENTIC, result, tuple(warnings))
