"""Partner ingest: ingest keys and the signature of ``POST /ingest/<source>``
(docs/design.md, Partner ingest).

An ingest key is derived, not drawn: ``pgi_`` and the unpadded base64url of
HMAC-SHA256 keyed by the hash salt over the integration's id (purpose
``ingest-key``, so it never equals a device or IP hash). The table keeps only
its SHA-256, as for API keys; the gateway can derive the key again to check a
signature made with it, which a stored hash alone could not do without
becoming the secret itself.

A signed request carries ``X-Proofgate-Integration: <integration id>`` and
``X-Proofgate-Signature: t=<unix seconds>,v1=<hex>``, ``v1`` being
HMAC-SHA256 keyed by the ingest key over ``<t>.<raw body>``: the scheme of
our outgoing webhooks (``domain.webhooks``), so a partner that verifies our
deliveries signs its own the same way. A timestamp more than
``REPLAY_WINDOW_SECONDS`` away from the gateway's clock is refused, which
bounds how long a captured request can be replayed; within the window a
replay is answered from the partner event id's record and appends nothing.
"""

from __future__ import annotations

import base64
import hmac
from datetime import datetime
from enum import StrEnum

from .errors import Unauthenticated
from .identifiers import salted_hash
from .validation import ascii_digits
from .webhooks import SIGNATURE_HEADER, sign

__all__ = [
    "INGEST_KEY_PREFIX",
    "INTEGRATION_HEADER",
    "REPLAY_WINDOW_SECONDS",
    "SIGNATURE_HEADER",
    "Refusal",
    "check_signature",
    "ingest_key",
    "refused",
    "signature_header",
]

INGEST_KEY_PREFIX = "pgi_"
INTEGRATION_HEADER = "X-Proofgate-Integration"
REPLAY_WINDOW_SECONDS = 300
_PURPOSE = "ingest-key"
_SCHEME = "v1"
_SIGNATURE_MAX_CHARS = 1024


class Refusal(StrEnum):
    """``extensions.reason`` of an UNAUTHENTICATED ingest call: which part of
    the caller's own credentials failed, so a partner can fix its side."""

    MISSING_SIGNATURE = "MISSING_SIGNATURE"
    MALFORMED_SIGNATURE = "MALFORMED_SIGNATURE"
    STALE_SIGNATURE = "STALE_SIGNATURE"
    BAD_SIGNATURE = "BAD_SIGNATURE"
    UNKNOWN_INTEGRATION = "UNKNOWN_INTEGRATION"
    REVOKED_INTEGRATION = "REVOKED_INTEGRATION"


def refused(reason: Refusal, message: str, hint: str) -> Unauthenticated:
    return Unauthenticated(message, hint=hint, reason=reason.value)


def ingest_key(salt: bytes, integration_id: str) -> str:
    digest = bytes.fromhex(salted_hash(salt, _PURPOSE, integration_id))
    return INGEST_KEY_PREFIX + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def signature_header(key: str, timestamp: int, body: bytes) -> str:
    """What a partner sends; the tests and the explorer's example build it here."""
    return f"t={timestamp},{_SCHEME}={sign(key, timestamp, body)}"


def _fields(header: str) -> tuple[int, list[str]]:
    fields: dict[str, list[str]] = {}
    for part in header.split(","):
        name, _, value = part.strip().partition("=")
        fields.setdefault(name, []).append(value)
    stamps = fields.get("t", [])
    signatures = fields.get(_SCHEME, [])
    if len(stamps) != 1 or not ascii_digits(stamps[0]) or len(stamps[0]) > 12 or not signatures:
        raise refused(
            Refusal.MALFORMED_SIGNATURE,
            f"{SIGNATURE_HEADER} is malformed",
            f"Send {SIGNATURE_HEADER}: t=<unix seconds>,v1=<hex HMAC-SHA256 of '<t>.<body>'>.",
        )
    return int(stamps[0]), signatures


def check_signature(
    key: str,
    header: str | None,
    body: bytes,
    *,
    now: datetime,
    window_seconds: int = REPLAY_WINDOW_SECONDS,
) -> None:
    """Raises UNAUTHENTICATED with a ``reason`` unless ``header`` signs ``body``
    with ``key`` at a time within the window."""
    if not header:
        raise refused(
            Refusal.MISSING_SIGNATURE,
            f"{SIGNATURE_HEADER} is missing",
            "Sign the raw body with the ingest key, as for proofgate's webhooks.",
        )
    if len(header) > _SIGNATURE_MAX_CHARS:
        raise refused(
            Refusal.MALFORMED_SIGNATURE,
            f"{SIGNATURE_HEADER} is too long",
            "Send one t= and one v1= value.",
        )
    timestamp, signatures = _fields(header)
    if abs(now.timestamp() - timestamp) > window_seconds:
        raise refused(
            Refusal.STALE_SIGNATURE,
            f"The signature's timestamp is more than {window_seconds} seconds from the "
            "gateway's clock",
            "Sign each request when you send it, with the current Unix time; check your clock.",
        )
    expected = sign(key, timestamp, body)
    if not any(hmac.compare_digest(expected, candidate) for candidate in signatures):
        raise refused(
            Refusal.BAD_SIGNATURE,
            "The signature does not match the body",
            "HMAC-SHA256 keyed by the ingest key over '<t>.' followed by the exact bytes sent.",
        )
