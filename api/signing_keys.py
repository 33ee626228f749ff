"""The certificate key ring, from settings.

The active private key comes from ``PROOFGATE_SIGNING_KEY`` (PEM text) or
``PROOFGATE_SIGNING_KEY_FILE``; otherwise the embedded default generates one
into its data directory once. ``PROOFGATE_VERIFYING_KEYS_FILE`` holds the
public keys of retired signing keys (PEM, several in one file): after a
rotation they keep the certificates they signed verifiable.
"""

from __future__ import annotations

import re

from domain.errors import ConfigurationError, ProofgateError
from domain.signing import SigningKey, VerifyingKey

__all__ = ["new_signing_key_pem", "parse_signing_key", "parse_verifying_keys"]

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
