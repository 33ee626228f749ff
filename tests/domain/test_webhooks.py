from __future__ import annotations

import hashlib
import hmac
from datetime import UTC, datetime, timedelta

from domain.webhooks import delivery_id, sign, signature_header, verify_signature

SECRET = "whsec_test"
NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
STAMP = int(NOW.timestamp())
BODY = b'{"id":"whd_1"}'


def test_the_signature_is_hmac_sha256_over_timestamp_dot_body() -> None:
    expected = hmac.new(SECRET.encode(), b"1700000000.{}", hashlib.sha256).hexdigest()
    assert sign(SECRET, 1700000000, b"{}") == expected
    assert signature_header(SECRET, 1700000000, b"{}") == f"t=1700000000,v1={expected}"


def test_a_receiver_accepts_only_the_exact_recent_body() -> None:
    header = signature_header(SECRET, STAMP, BODY)
    assert verify_signature(SECRET, header, BODY, now=NOW)
    assert not verify_signature(SECRET, header, BODY + b" ", now=NOW)
    assert not verify_signature("whsec_other", header, BODY, now=NOW)
    assert not verify_signature(
        SECRET, header.replace(f"t={STAMP}", f"t={STAMP + 1}"), BODY, now=NOW
    )


def test_old_or_malformed_headers_are_refused() -> None:
    header = signature_header(SECRET, STAMP, BODY)
    assert verify_signature(SECRET, header, BODY, now=NOW + timedelta(seconds=300))
    assert not verify_signature(SECRET, header, BODY, now=NOW + timedelta(seconds=301))
    for bad in ("", "v1=abc", f"t=x,v1={sign(SECRET, STAMP, BODY)}", f"t={STAMP},t={STAMP},v1=00"):
        assert not verify_signature(SECRET, bad, BODY, now=NOW)


def test_one_delivery_id_per_webhook_and_alert() -> None:
    assert delivery_id("wh_1", "thr_a") == delivery_id("wh_1", "thr_a")
    assert (
        len(
            {
                delivery_id("wh_1", "thr_a"),
                delivery_id("wh_2", "thr_a"),
                delivery_id("wh_1", "thr_b"),
            }
        )
        == 3
    )
    assert delivery_id("wh_1", "thr_a").startswith("whd_")
