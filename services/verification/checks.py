"""The checks behind a verification: certificate hash and signature, the
whole chain, the claim. Reads only; ``verifyProduct`` records the result.

A stored record that no longer parses counts as a failed check, never as a
failed request: tampering must produce a verdict.
"""

from __future__ import annotations

import hmac
from collections.abc import Sequence
from typing import NamedTuple

from domain.certificates import (
    Certificate,
    CertificateCheck,
    CertificateRecord,
    verify_certificate,
)
from domain.enums import ProductStatus
from domain.errors import ProofgateError
from domain.signing import KeyRing
from domain.verification import Outcome, assess
from storage import Item
from storage.access_patterns import PRODUCT_BY_ID

from ..claims.items import claim_is_active
from ..context import CommandContext
from ..products.items import certificate_record, product_status
from ..provenance.walk import check_chain
from ..reads import StorageReads
from .lookup import record_for_code

__all__ = ["Checks", "check_certificate", "run_checks"]

_MALFORMED = (KeyError, TypeError, ValueError, ProofgateError)


class Checks(NamedTuple):
    """What the checks found; a tuple, as one is made for every verification."""

    outcome: Outcome
    product: Item | None = None
    signature_valid: bool = False
    chain_intact: bool = False
    claim: Item | None = None
    """The active claim, if any."""
    is_claimant: bool = False
    chain: Sequence[Item] = ()
    """The events read, in order (the verification page lists the latest)."""


def check_certificate(product: Item, key_ring: KeyRing) -> CertificateCheck:
    """The stored record still produces the certificate hash, and a key of
    the ring signed that hash (``domain.certificates.verify_certificate``)."""
    return verify_certificate(_record(product), _certificate(product), key_ring)


def _record(product: Item) -> CertificateRecord | None:
    try:
        return certificate_record(product)
    except _MALFORMED:
        return None


def _certificate(product: Item) -> Certificate | None:
    try:
        return Certificate(
            hash=product["certificateHash"],
            signature=product["signature"],
            key_id=product["keyId"],
            algorithm=product["algorithm"],
        )
    except _MALFORMED:
        return None


def _status(product: Item) -> ProductStatus | None:
    try:
        return product_status(product)
    except _MALFORMED:
        return None


async def run_checks(
    context: CommandContext, code: str, device_hash: str | None, *, shared: bool = False
) -> Checks:
    """A scan reads straight from storage rather than through the request's
    DataLoaders: two dependent reads, the code (AP05) and then the product
    with its claim and chain in one Query (AP33), so batching has nothing to
    coalesce and each load's dispatch (a future, a task, a turn of the loop)
    was pure cost. ``shared`` (the read-only ``verification`` query, which
    one document may alias many times) reads through the DataLoaders, so its
    aliases read each page once. The product is then held for the fields of
    the result (docs/design.md, Verify path)."""
    loaders = context.loaders if shared else StorageReads(context.storage, context.principal.tenant)
    record = await record_for_code(loaders, code)
    if record is None:
        return Checks(
            assess(
                found=False,
                hash_valid=False,
                signature_valid=False,
                chain_intact=False,
                status=None,
                claimed_by_other=False,
            )
        )
    product, chain, claim = record.product, record.chain, record.claim
    context.loaders.prime(PRODUCT_BY_ID, product, product_id=product["id"])
    certificate = check_certificate(product, context.services.key_ring)
    chain_intact = check_chain(product, chain).intact
    active = claim if claim_is_active(claim, context.now()) else None
    is_claimant = (
        active is not None
        and device_hash is not None
        and hmac.compare_digest(str(active.get("deviceHash", "")), device_hash)
    )
    outcome = assess(
        found=True,
        hash_valid=certificate.hash_valid,
        signature_valid=certificate.signature_valid,
        chain_intact=chain_intact,
        status=_status(product),
        claimed_by_other=active is not None and not is_claimant,
    )
    return Checks(
        outcome, product, certificate.signature_valid, chain_intact, active, is_claimant, chain
    )
