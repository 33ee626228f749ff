"""``signingKeys``: public; the process's key ring, then the other keys the
store's processes recorded (AP29)."""

from __future__ import annotations

import strawberry

from services.signing_keys import published_keys
from storage.access_patterns import SIGNING_KEYS

from ..context import Info
from ..fields import ap_field
from .types import SigningKey

__all__ = ["CertificateQueries"]


@strawberry.type
class CertificateQueries:
    @ap_field(
        SIGNING_KEYS,
        description="Every key certificates may be signed with: this gateway's, the active "
        "one first, then those the store's other gateways recorded",
    )
    async def signing_keys(self, info: Info) -> list[SigningKey]:
        ring = info.context.services.key_ring
        keys = await published_keys(info.context.services.storage, ring)
        return [SigningKey.from_key(key, ring) for key in keys]
