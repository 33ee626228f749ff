"""Public signing keys, published so anyone can check a certificate offline."""

from __future__ import annotations

import strawberry

from domain.signing import ALGORITHM, KeyRing, VerifyingKey

__all__ = ["SigningKey"]


@strawberry.type(
    description="A public key that signs or signed certificates. Keep verifying with "
    "inactive keys: they signed certificates issued before a rotation."
)
class SigningKey:
    key_id: str
    algorithm: str
    public_key_pem: str
    active: bool

    @classmethod
    def from_key(cls, key: VerifyingKey, ring: KeyRing) -> SigningKey:
        return cls(
            key_id=key.kid,
            algorithm=ALGORITHM,
            public_key_pem=key.public_key_pem,
            active=ring.is_active(key.kid),
        )
