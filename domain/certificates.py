"""Product certificates: the canonical record, its hash and its signature.

The contract (docs/design.md, Certificates), which third parties verify offline:

- the record is the JSON object ``{brandId, createdAt, metadata, name,
  productId, sku}`` in canonical JSON (see ``canonical``); ``sku`` is ``null``
  when absent, ``metadata`` is ``{}`` when absent, and ``createdAt`` is spelled
  by ``format_datetime`` exactly as the API returns it;
- the certificate hash is SHA-256 of those bytes, lowercase hex;
- the signature is Ed25519 over the 32 raw bytes of the hash (not over its hex),
  base64url without padding, made by the key named ``keyId``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from .canonical import JSONObject, canonical_json, normalize_object, sha256_hex
from .datetimes import format_datetime
from .encoding import b64url_decode, b64url_encode, is_sha256_hex
from .errors import ProofgateError
from .signing import ALGORITHM, KeyRing, SigningKey, VerifyingKey
from .verdicts import BY_TEXT

__all__ = [
    "Certificate",
    "CertificateCheck",
    "CertificateRecord",
    "issue_certificate",
    "sign_hash",
    "verify_certificate",
    "verify_signature",
]


@dataclass(frozen=True)
class CertificateRecord:
    product_id: str
    brand_id: str
    name: str
    created_at: datetime
    sku: str | None = None
    metadata: Mapping[str, object] | None = None

    def document(self) -> JSONObject:
        return self._fields(normalize_object(self.metadata or {}, field="metadata"))

    def canonical_bytes(self) -> bytes:
        # canonical_json normalises the whole record, so the metadata is
        # walked once, not first by document() and then again here.
        metadata = self.metadata or {}
        if not isinstance(metadata, Mapping):
            normalize_object(metadata, field="metadata")  # refused as document() refuses it
        return canonical_json(self._fields(metadata), field="certificate")

    def _fields(self, metadata: object) -> JSONObject:
        return {
            "brandId": self.brand_id,
            "createdAt": format_datetime(self.created_at),
            "metadata": metadata,  # type: ignore[dict-item]
            "name": self.name,
            "productId": self.product_id,
            "sku": self.sku,
        }

    def hash(self) -> str:
        return sha256_hex(self.canonical_bytes())


@dataclass(frozen=True)
class Certificate:
    hash: str
    signature: str
    key_id: str
    algorithm: str = ALGORITHM


class CertificateCheck(NamedTuple):
    """``hash_valid``: the record still produces the certificate's hash.
    ``signature_valid``: a known key signed that hash. Independent on purpose, so
    a verifier can tell an altered record from a forged certificate. A tuple:
    one is made for every verification."""

    hash_valid: bool
    signature_valid: bool

    @property
    def valid(self) -> bool:
        return self.hash_valid and self.signature_valid


def sign_hash(hash_hex: str, signer: SigningKey) -> Certificate:
    signature = signer.sign(bytes.fromhex(hash_hex))
    return Certificate(hash=hash_hex, signature=b64url_encode(signature), key_id=signer.kid)


def issue_certificate(record: CertificateRecord, signer: SigningKey) -> Certificate:
    return sign_hash(record.hash(), signer)


def verify_signature(
    certificate: Certificate, public_keys: KeyRing | Mapping[str, VerifyingKey]
) -> bool:
    keys = public_keys.keys if isinstance(public_keys, KeyRing) else public_keys
    key = keys.get(certificate.key_id)
    signature, hash_hex = certificate.signature, certificate.hash
    if key is None or certificate.algorithm != ALGORITHM:
        return False
    if type(signature) is not str or type(hash_hex) is not str:
        return False  # a stored value tampered into another type: no text to check
    if len(signature) > _REMEMBERED_TEXT_MAX or len(hash_hex) > _REMEMBERED_TEXT_MAX:
        # Longer than any signature or hash: checked, not remembered, so the
        # memo stays a few hundred bytes an entry whatever a tampered item holds.
        return _checked(key.raw, signature, hash_hex)
    raw = key.raw
    return BY_TEXT.verdict((raw, signature, hash_hex), lambda: _checked(raw, signature, hash_hex))


_REMEMBERED_TEXT_MAX = 128
"""An Ed25519 signature is 86 characters of base64url, a SHA-256 hash 64 of hex."""


def _checked(raw_public: bytes, signature: str, hash_hex: str) -> bool:
    """The verdict on the stored text as it is, remembered by all of it: the
    key's raw bytes, the signature and the hash (a pure function of them, so a
    change to any one misses). A product is scanned again and again with the
    same certificate, and a hit skips the base64 and hex checks and decoding
    too (docs/design.md, Verify path); a miss verifies, itself remembered by
    bytes in ``domain.signing`` (both within ``domain.verdicts``' budget)."""
    if not is_sha256_hex(hash_hex):
        return False
    decoded = b64url_decode(signature)
    if decoded is None:
        return False
    key = VerifyingKey.from_public_key(Ed25519PublicKey.from_public_bytes(raw_public))
    return key.verify(decoded, bytes.fromhex(hash_hex))


def verify_certificate(
    record: CertificateRecord | None,
    certificate: Certificate | None,
    public_keys: KeyRing | Mapping[str, VerifyingKey],
) -> CertificateCheck:
    """None stands for a stored record or certificate that no longer parses,
    and a record that no longer canonicalises matches no hash: each fails the
    checks that need it, so tampering yields a verdict, never an error."""
    if certificate is None:
        return CertificateCheck(hash_valid=False, signature_valid=False)
    return CertificateCheck(
        hash_valid=record is not None and _hash_or_none(record) == certificate.hash,
        signature_valid=verify_signature(certificate, public_keys),
    )


def _hash_or_none(record: CertificateRecord) -> str | None:
    try:
        return record.hash()
    except (TypeError, ValueError, ProofgateError):
        return None
