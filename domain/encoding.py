"""base64url without padding, and the shape of a SHA-256 hex digest.

Decoding is strict (alphabet and length checked) because the lenient stdlib
decoder skips stray characters, which would let two spellings stand for one
signature.
"""

from __future__ import annotations

import base64
import re

__all__ = ["b64url_decode", "b64url_encode", "is_sha256_hex"]

_B64URL = re.compile(r"[A-Za-z0-9_-]*")
_SHA256_HEX = re.compile(r"[0-9a-f]{64}")


def b64url_encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes | None:
    """Unpadded base64url; ``None`` unless ``text`` is the canonical encoding of some bytes."""
    if not _B64URL.fullmatch(text) or len(text) % 4 == 1:
        return None
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if b64url_encode(data) != text:
        return None
    return data


def is_sha256_hex(text: str) -> bool:
    """Lowercase only: the canonical spelling, so one digest has one key (AP06)."""
    return _SHA256_HEX.fullmatch(text) is not None
