"""Ingest keys and the signature of POST /ingest, checked against the
standard library's HMAC (the partner's side, written independently)."""

from __future__ import annotations

import base64
import hashlib
import hmac
from datetime import UTC, datetime, timedelta

import pytest

from domain.errors import Unauthenticated
from domain.identifiers import hash_device_fingerprint
from domain.ingest import (
    INGEST_KEY_PREFIX,
    REPLAY_WINDOW_SECONDS,
    Refusal,
    check_signature,
    ingest_key,
    signature_header,
)

SALT = bytes(range(32))
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
BODY = b'{"eventId":"e-1","productId":"01JD8X3V9Q7ZK5M2N4P6R8T0W1","type":"SHIPPED"}'
INTEGRATION = "int_01JD8X3V9Q7ZK5M2N4P6R8T0W1_01JD8X3V9Q7ZK5M2N4P6R8T0W2"


def partner_signature(key: str, timestamp: int, body: bytes) -> str:
    """What a partner computes, from the documented scheme alone."""
    digest = hmac.new(key.encode(), str(timestamp).encode() + b"." + body, hashlib.sha256)
    return f"t={timestamp},v1={digest.hexdigest()}"


def test_a_key_is_derived_from_the_salt_and_the_integration_only() -> None:
    key = ingest_key(SALT, INTEGRATION)
    assert key == ingest_key(SALT, INTEGRATION)
    assert key.startswith(INGEST_KEY_PREFIX) and len(key) == len(INGEST_KEY_PREFIX) + 43
    raw = base64.urlsafe_b64decode(key.removeprefix(INGEST_KEY_PREFIX) + "=")
    assert len(raw) == 32
    assert key != ingest_key(SALT, INTEGRATION[:-1] + "3")
    assert key != ingest_key(bytes(reversed(SALT)), INTEGRATION)
    # Purposes are separated: no fingerprint a phone sends hashes to the key.
    assert raw.hex() != hash_device_fingerprint(SALT, INTEGRATION)


def test_the_partners_signature_is_accepted_within_the_window() -> None:
    key = ingest_key(SALT, INTEGRATION)
    stamp = int(NOW.timestamp())
    header = partner_signature(key, stamp, BODY)
    assert header == signature_header(key, stamp, BODY)
    check_signature(key, header, BODY, now=NOW)
    for skew in (REPLAY_WINDOW_SECONDS, -REPLAY_WINDOW_SECONDS):
        check_signature(key, header, BODY, now=NOW + timedelta(seconds=skew))
    # Several v1 values: any one that matches will do (a partner rotating keys).
    rotated = partner_signature("pgi_old", stamp, BODY) + "," + header.split(",")[1]
    check_signature(key, rotated, BODY, now=NOW)


@pytest.mark.parametrize(
    ("header", "now", "reason"),
    [
        (None, NOW, Refusal.MISSING_SIGNATURE),
        ("", NOW, Refusal.MISSING_SIGNATURE),
        ("v1=00", NOW, Refusal.MALFORMED_SIGNATURE),
        ("t=abc,v1=00", NOW, Refusal.MALFORMED_SIGNATURE),
        ("t=1,t=2,v1=00", NOW, Refusal.MALFORMED_SIGNATURE),
        (f"t={int(NOW.timestamp())}", NOW, Refusal.MALFORMED_SIGNATURE),
        ("t=1," + "v1=00," * 200, NOW, Refusal.MALFORMED_SIGNATURE),
        ("signed", NOW + timedelta(seconds=REPLAY_WINDOW_SECONDS + 1), Refusal.STALE_SIGNATURE),
        ("signed", NOW - timedelta(seconds=REPLAY_WINDOW_SECONDS + 1), Refusal.STALE_SIGNATURE),
        ("other-key", NOW, Refusal.BAD_SIGNATURE),
        ("other-body", NOW, Refusal.BAD_SIGNATURE),
    ],
)
def test_refusals_say_which_part_failed(header: str | None, now: datetime, reason: str) -> None:
    key = ingest_key(SALT, INTEGRATION)
    stamp = int(NOW.timestamp())
    sent = {
        "signed": partner_signature(key, stamp, BODY),
        "other-key": partner_signature(ingest_key(SALT, "other"), stamp, BODY),
        "other-body": partner_signature(key, stamp, BODY + b" "),
    }.get(header or "", header)
    with pytest.raises(Unauthenticated) as refused:
        check_signature(key, sent, BODY, now=now)
    assert refused.value.extensions["reason"] == reason
    assert refused.value.hint
