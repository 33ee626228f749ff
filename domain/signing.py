"""Ed25519 signing keys, their ids, and the ring that lets keys rotate.

Only bytes in, bytes out: reading a key file or an environment variable is the
caller's I/O. A key id (``kid``) is derived from the public key itself (the
first 16 hex digits of SHA-256 over the 32 raw public bytes), so an id can
never be attached to the wrong key and anyone can recompute it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from domain.errors import ProofgateError
from domain.verdicts import BY_BYTES

__all__ = [
    "ALGORITHM",
    "KEY_ID_LENGTH",
    "KeyRing",
    "SigningKey",
    "VerifyingKey",
    "key_id",
]

ALGORITHM = "Ed25519"
KEY_ID_LENGTH = 16

_KEY_HINT = (
    "Provide an unencrypted Ed25519 private key in PKCS#8 PEM (openssl genpkey -algorithm ed25519)."
)


def _raw_public(public_key: Ed25519PublicKey) -> bytes:
    return public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def _signature_holds(raw_public: bytes, signature: bytes, message: bytes) -> bool:
    """Remembered by the key's raw bytes, not its id: a verdict can only be
    reused for exactly the key, signature and message it was computed on
    (``domain.verdicts``, within its byte budget)."""

    def check() -> bool:
        try:
            Ed25519PublicKey.from_public_bytes(raw_public).verify(signature, message)
        except InvalidSignature:
            return False
        return True

    return BY_BYTES.verdict((raw_public, signature, message), check)


def key_id(public_key: Ed25519PublicKey) -> str:
    return hashlib.sha256(_raw_public(public_key)).hexdigest()[:KEY_ID_LENGTH]


@dataclass(frozen=True, eq=False)
class VerifyingKey:
    """A public key as published by ``signingKeys``."""

    kid: str
    public_key: Ed25519PublicKey
    raw: bytes = field(init=False, repr=False)
    """The 32 raw public bytes, serialised once: every verification keys its
    remembered verdict by them."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "raw", _raw_public(self.public_key))

    @classmethod
    def from_public_key(cls, public_key: Ed25519PublicKey) -> VerifyingKey:
        return cls(key_id(public_key), public_key)

    @classmethod
    def from_pem(cls, pem: bytes) -> VerifyingKey:
        try:
            public_key = serialization.load_pem_public_key(pem)
        except (ValueError, UnsupportedAlgorithm) as exc:
            raise ProofgateError(f"Cannot read public key PEM: {exc}") from None
        if not isinstance(public_key, Ed25519PublicKey):
            raise ProofgateError(f"Public key is {type(public_key).__name__}, expected Ed25519")
        return cls.from_public_key(public_key)

    @property
    def public_key_pem(self) -> str:
        return self.public_key.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        ).decode("ascii")

    def verify(self, signature: bytes, message: bytes) -> bool:
        return _signature_holds(self.raw, signature, message)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, VerifyingKey) and other.kid == self.kid

    def __hash__(self) -> int:
        return hash(self.kid)


@dataclass(frozen=True, eq=False)
class SigningKey:
    """A private key. Never printed: ``repr`` shows only the kid."""

    private_key: Ed25519PrivateKey = field(repr=False)
    verifying_key: VerifyingKey

    @classmethod
    def from_private_key(cls, private_key: Ed25519PrivateKey) -> SigningKey:
        return cls(private_key, VerifyingKey.from_public_key(private_key.public_key()))

    @classmethod
    def generate(cls) -> SigningKey:
        return cls.from_private_key(Ed25519PrivateKey.generate())

    @classmethod
    def from_pem(cls, pem: bytes) -> SigningKey:
        try:
            private_key = serialization.load_pem_private_key(pem, password=None)
        except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
            raise ProofgateError(f"Cannot read signing key PEM: {exc}", hint=_KEY_HINT) from None
        if not isinstance(private_key, Ed25519PrivateKey):
            raise ProofgateError(
                f"Signing key is {type(private_key).__name__}, expected Ed25519", hint=_KEY_HINT
            )
        return cls.from_private_key(private_key)

    @property
    def kid(self) -> str:
        return self.verifying_key.kid

    @property
    def public_key_pem(self) -> str:
        return self.verifying_key.public_key_pem

    def private_key_pem(self) -> bytes:
        """PKCS#8 PEM, unencrypted: what the embedded default writes to its data directory."""
        return self.private_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )

    def sign(self, message: bytes) -> bytes:
        return self.private_key.sign(message)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SigningKey) and other.kid == self.kid

    def __hash__(self) -> int:
        return hash(self.kid)


@dataclass(frozen=True)
class KeyRing:
    """One active signer plus every key still accepted for verification.

    Rotation: make the new key active and keep the old public keys here, so
    certificates signed before the rotation keep verifying.
    """

    active: SigningKey
    keys: Mapping[str, VerifyingKey]

    @classmethod
    def of(cls, active: SigningKey, retired: Iterable[VerifyingKey] = ()) -> KeyRing:
        keys = {key.kid: key for key in retired}
        keys[active.kid] = active.verifying_key
        return cls(active, keys)

    def get(self, kid: str) -> VerifyingKey | None:
        return self.keys.get(kid)

    def is_active(self, kid: str) -> bool:
        return kid == self.active.kid

    def published(self) -> list[VerifyingKey]:
        """The active key first, then the others by kid: a stable order for ``signingKeys``."""
        others = sorted(
            (key for kid, key in self.keys.items() if kid != self.active.kid),
            key=lambda key: key.kid,
        )
        return [self.active.verifying_key, *others]
