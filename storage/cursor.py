"""Opaque pagination cursors: AES-GCM over (AP, partition, last key, tenant).

Unsigned cursors are an IDOR-class bug: a client could point one at another
partition. Ours are encrypted and authenticated, and bound to the access pattern,
the partition and the caller's tenant; any mismatch is ``InvalidCursor``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
from collections.abc import Mapping

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from domain.errors import InvalidCursor

__all__ = ["CursorCodec"]

_VERSION = b"\x01"
_NONCE_BYTES = 12
_ASSOCIATED = b"proofgate-cursor"


def _encode(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


class CursorCodec:
    def __init__(self, key: bytes) -> None:
        if len(key) not in (16, 24, 32):
            raise ValueError("Cursor key must be 16, 24 or 32 bytes")
        self._aead = AESGCM(key)
        self._key = key

    def derive_key(self, label: bytes) -> bytes:
        """A key for another use (``label``) from the cursor key, a secret
        every process of the deployment shares: HMAC-SHA256(key, label)."""
        return hmac.new(self._key, label, hashlib.sha256).digest()

    @staticmethod
    def generate_key() -> bytes:
        return AESGCM.generate_key(bit_length=256)

    def encode(self, ap_id: str, partition: str, last_key: Mapping[str, str], tenant: str) -> str:
        payload = json.dumps([ap_id, partition, dict(last_key), tenant], separators=(",", ":"))
        nonce = os.urandom(_NONCE_BYTES)
        sealed = self._aead.encrypt(nonce, payload.encode(), _ASSOCIATED)
        return _encode(_VERSION + nonce + sealed)

    def decode(self, token: str, ap_id: str, partition: str, tenant: str) -> dict[str, str]:
        """The last evaluated key, if the cursor was minted for exactly this
        access pattern, partition and tenant."""
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        except (binascii.Error, ValueError):
            raise InvalidCursor() from None
        if _encode(raw) != token:
            # The decoder skips stray characters and ignores trailing bits, so
            # only the one canonical spelling of a cursor is accepted.
            raise InvalidCursor()
        if len(raw) <= 1 + _NONCE_BYTES or raw[:1] != _VERSION:
            raise InvalidCursor()
        nonce, sealed = raw[1 : 1 + _NONCE_BYTES], raw[1 + _NONCE_BYTES :]
        try:
            payload = json.loads(self._aead.decrypt(nonce, sealed, _ASSOCIATED))
            cursor_ap, cursor_partition, last_key, cursor_tenant = payload
        except (InvalidTag, ValueError, TypeError):
            raise InvalidCursor() from None
        if (cursor_ap, cursor_partition, cursor_tenant) != (ap_id, partition, tenant):
            raise InvalidCursor("Cursor belongs to another list")
        if not isinstance(last_key, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in last_key.items()
        ):
            raise InvalidCursor()
        return last_key
