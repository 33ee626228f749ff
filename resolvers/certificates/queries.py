"""``signingKeys``: public, read from the process's key ring, no storage."""

from __future__ import annotations

import strawberry

from ..context import Info
from ..fields import computed_field
from .types import SigningKey

__all__ = ["CertificateQueries"]


@strawberry.type
class CertificateQueries:
    @computed_field(description="Every key certificates may be signed with, the active one first")
    def signing_keys(self, info: Info) -> list[SigningKey]:
        ring = info.context.services.key_ring
        return [SigningKey.from_key(key, ring) for key in ring.published()]
