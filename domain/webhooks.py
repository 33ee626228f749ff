"""Webhook signatures and delivery identity.

A delivery carries ``X-Proofgate-Signature: t=<unix seconds>,v1=<hex>``, where
``v1`` is HMAC-SHA256 keyed by the webhook secret over ``<t>.<raw body>``.
Signing the timestamp with the body lets a receiver refuse a replayed old
delivery (check ``t`` against its clock) without trusting any other header.
"""

from __future__ import annotations

import hashlib
import hmac
from datetime import datetime

from .validation import ascii_digits

__all__ = [
    "DELIVERY_HEADER",
    "DELIVERY_ID_PREFIX",
    "EVENT_HEADER",
    "SIGNATURE_HEADER",
    "SIGNATURE_TOLERANCE_SECONDS",
    "delivery_id",
    "sign",
    "signature_header",
    "verify_signature",
]

SIGNATURE_HEADER = "X-Proofgate-Signature"
DELIVERY_HEADER = "X-Proofgate-Delivery"
EVENT_HEADER = "X-Proofgate-Event"
DELIVERY_ID_PREFIX = "whd_"
SIGNATURE_TOLERANCE_SECONDS = 300
_SCHEME = "v1"


def delivery_id(webhook_id: str, alert_id: str) -> str:
    """One id per (webhook, alert): every retry of a delivery reuses it."""
    digest = hashlib.sha256(f"{webhook_id}\x00{alert_id}".encode()).hexdigest()
    return DELIVERY_ID_PREFIX + digest[:32]


def sign(secret: str, timestamp: int, body: bytes) -> str:
    message = str(timestamp).encode() + b"." + body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def signature_header(secret: str, timestamp: int, body: bytes) -> str:
    return f"t={timestamp},{_SCHEME}={sign(secret, timestamp, body)}"


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
