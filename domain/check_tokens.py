"""The token a verification page carries to its "Record this check" form
(docs/design.md, Verification page).

It proves the POST comes from a page this gateway rendered for this code, to
this client address, lately: a page elsewhere cannot make a visitor's browser
record scans (which would feed the threat rules from many addresses), because
it cannot mint a token, and one it fetched itself names its own address.
"""

from __future__ import annotations

import base64
import hashlib
import hmac

__all__ = ["CHECK_TOKEN_TTL_SECONDS", "check_token_key", "mint_check_token", "valid_check_token"]

CHECK_TOKEN_TTL_SECONDS = 1800
"""A page left open for half an hour must be reloaded to record its check."""
_MAC_BYTES = 16
_SKEW_SECONDS = 60
"""Processes behind one table may disagree on the time by this much."""


def check_token_key(hash_salt: bytes) -> bytes:
    """A key of its own, derived from the secret salt, so a token reveals
    nothing of the salt's other uses."""
    return hmac.new(hash_salt, b"proofgate verification page token", hashlib.sha256).digest()


def _mac(key: bytes, code: str, client: str | None, issued: int) -> str:
    message = f"{code}\x00{client or ''}\x00{issued}".encode()
    digest = hmac.new(key, message, hashlib.sha256).digest()[:_MAC_BYTES]
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def mint_check_token(key: bytes, code: str, client: str | None, now: float) -> str:
    issued = int(now)
    return f"{issued:x}.{_mac(key, code, client, issued)}"


def valid_check_token(key: bytes, token: str, code: str, client: str | None, now: float) -> bool:
    issued_text, _, mac = token.partition(".")
    if not (0 < len(issued_text) <= 12) or not mac:
        return False
    try:
        issued = int(issued_text, 16)
    except ValueError:
        return False
    if not -_SKEW_SECONDS <= now - issued <= CHECK_TOKEN_TTL_SECONDS:
        return False
    return hmac.compare_digest(mac, _mac(key, code, client, issued))
