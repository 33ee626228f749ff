"""Webhook signatures and delivery identity.

A delivery is signed per Standard Webhooks
(docs/design.md, Webhook signatures): ``webhook-id`` (the delivery id, the same on every retry),
``webhook-timestamp`` (unix seconds of the attempt) and ``webhook-signature:
v1,<base64>``, HMAC-SHA256 keyed by the secret's bytes (``whsec_`` then
base64) over ``<id>.<timestamp>.<raw body>``. While a rotated-out secret is
still valid, the header carries one signature per secret, space-separated.

Until a webhook opts out it also carries the older ``X-Proofgate-Signature:
t=<unix seconds>,v1=<hex>``: HMAC-SHA256 keyed by the secret's text over
``<t>.<raw body>``, one ``v1`` per valid secret. Signing the timestamp with
the body lets a receiver refuse a replayed old delivery either way.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Sequence
from datetime import datetime

from .identifiers import WEBHOOK_SECRET_PREFIX
from .validation import ascii_digits

__all__ = [
    "DELIVERY_HEADER",
    "DELIVERY_ID_PREFIX",
    "EVENT_HEADER",
    "SIGNATURE_HEADER",
    "SIGNATURE_TOLERANCE_SECONDS",
    "STANDARD_ID_HEADER",
    "STANDARD_SIGNATURE_HEADER",
    "STANDARD_TIMESTAMP_HEADER",
    "delivery_id",
    "secret_key",
    "sign",
    "signature_header",
    "standard_headers",
    "standard_signature",
    "verify_signature",
]

SIGNATURE_HEADER = "X-Proofgate-Signature"
DELIVERY_HEADER = "X-Proofgate-Delivery"
EVENT_HEADER = "X-Proofgate-Event"
DELIVERY_ID_PREFIX = "whd_"
SIGNATURE_TOLERANCE_SECONDS = 300
STANDARD_ID_HEADER = "webhook-id"
STANDARD_TIMESTAMP_HEADER = "webhook-timestamp"
STANDARD_SIGNATURE_HEADER = "webhook-signature"
_SCHEME = "v1"


def delivery_id(webhook_id: str, alert_id: str) -> str:
    """One id per (webhook, alert): every retry of a delivery reuses it."""
    digest = hashlib.sha256(f"{webhook_id}\x00{alert_id}".encode()).hexdigest()
    return DELIVERY_ID_PREFIX + digest[:32]


def sign(secret: str, timestamp: int, body: bytes) -> str:
    message = str(timestamp).encode() + b"." + body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def signature_header(secrets: str | Sequence[str], timestamp: int, body: bytes) -> str:
    """The older header, with one ``v1`` per valid secret."""
    valid = [secrets] if isinstance(secrets, str) else secrets
    return ",".join([f"t={timestamp}", *(f"{_SCHEME}={sign(s, timestamp, body)}" for s in valid)])


def secret_key(secret: str) -> bytes:
    """The HMAC key a ``whsec_`` secret stands for: the base64 after the
    prefix. Secrets minted before Standard Webhooks are url-safe base64
    without padding; they decode as they were made, but the official
    verifiers read only standard base64, so those webhooks rotate their
    secret to use them."""
    text = secret.removeprefix(WEBHOOK_SECRET_PREFIX)
    try:
        return base64.b64decode(text, validate=True)
    except binascii.Error:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def standard_signature(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(secret_key(secret), signed, hashlib.sha256).digest()
    return f"{_SCHEME},{base64.b64encode(digest).decode()}"


def standard_headers(
    secrets: Sequence[str], message_id: str, timestamp: int, body: bytes
) -> dict[str, str]:
    """The three Standard Webhooks headers, one signature per valid secret."""
    return {
        STANDARD_ID_HEADER: message_id,
        STANDARD_TIMESTAMP_HEADER: str(timestamp),
        STANDARD_SIGNATURE_HEADER: " ".join(
            standard_signature(s, message_id, timestamp, body) for s in secrets
        ),
    }


def verify_signature(
    secret: str,
    header: str,
    body: bytes,
    *,
    now: datetime,
    tolerance_seconds: int = SIGNATURE_TOLERANCE_SECONDS,
) -> bool:
    """What a receiver runs: the signature matches and the timestamp is recent."""
    fields: dict[str, list[str]] = {}
    for part in header.split(","):
        name, _, value = part.strip().partition("=")
        fields.setdefault(name, []).append(value)
    stamps = fields.get("t", [])
    if len(stamps) != 1 or not ascii_digits(stamps[0]):
        return False
    timestamp = int(stamps[0])
    if abs(now.timestamp() - timestamp) > tolerance_seconds:
        return False
    expected = sign(secret, timestamp, body)
    return any(hmac.compare_digest(expected, candidate) for candidate in fields.get(_SCHEME, []))
