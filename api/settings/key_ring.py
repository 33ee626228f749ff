"""The certificate key ring, from settings.

The active private key comes from ``PROOFGATE_SIGNING_KEY`` (PEM text) or
``PROOFGATE_SIGNING_KEY_FILE``; otherwise the embedded default generates one
into its data directory once. ``PROOFGATE_VERIFYING_KEYS_FILE`` holds the
public keys of retired signing keys (PEM, several in one file): after a
rotation they keep the certificates they signed verifiable.
"""

from __future__ import annotations

import logging
import re
from datetime import UTC, datetime

from domain.errors import ConfigurationError, ProofgateError
from domain.signing import KeyRing, SigningKey, VerifyingKey
from services.signing_keys import record_active_key
from storage import Storage

__all__ = [
    "new_signing_key_pem",
    "parse_signing_key",
    "parse_verifying_keys",
    "record_signing_key",
]

logger = logging.getLogger("proofgate.api")
_SHARE_HINT = (
    "Give every process the same PROOFGATE_SIGNING_KEY(_FILE), and the public halves of "
    "the others in PROOFGATE_VERIFYING_KEYS_FILE (docs/operations.md, "
    "'Several gateway processes on one table')."
)

_PUBLIC_PEM = re.compile(r"-----BEGIN PUBLIC KEY-----.+?-----END PUBLIC KEY-----", re.DOTALL)


def parse_signing_key(pem: str, source: str) -> SigningKey:
    try:
        return SigningKey.from_pem(pem.encode())
    except ProofgateError as error:
        raise ConfigurationError(
            f"Invalid signing key in {source}: {error.message}", hint=error.hint
        ) from None


def parse_verifying_keys(text: str, source: str) -> tuple[VerifyingKey, ...]:
    blocks = _PUBLIC_PEM.findall(text)
    if not blocks:
        raise ConfigurationError(
            f"No PEM public key in {source}", hint="Export keys with: openssl pkey -pubout"
        )
    try:
        return tuple(VerifyingKey.from_pem(block.encode()) for block in blocks)
    except ProofgateError as error:
        raise ConfigurationError(f"Invalid public key in {source}: {error.message}") from None


def new_signing_key_pem() -> str:
    return SigningKey.generate().private_key_pem().decode("ascii")


async def record_signing_key(storage: Storage, ring: KeyRing) -> None:
    """At start-up: record the active key in the store and say loudly when the
    processes on it could not verify each other's certificates."""
    agreement = await record_active_key(storage, ring, datetime.now(UTC))
    if agreement.unverifiable:
        logger.error(
            "This process cannot verify certificates signed by key(s) %s, recorded in the "
            "store by other processes: it answers COUNTERFEIT for their products. %s",
            ", ".join(agreement.unverifiable),
            _SHARE_HINT,
        )
    others = [key.kid for key in agreement.recorded if key.kid != ring.active.kid]
    if agreement.new and others:
        logger.warning(
            "This process signs with key %s, new to a store whose processes use %s: "
            "they verify its certificates only if they hold its public half. %s",
            ring.active.kid,
            ", ".join(others),
            _SHARE_HINT,
        )
