"""The durable baseline does the work it is compared for: it reads and checks
what the gateway checks, reaches the gateway's verdicts, and records each scan
with its counters, outbox row and burst alert. A baseline that skipped any of
it would flatter the gateway (docs/design.md, Performance budgets)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from bench._durable import BURST_THRESHOLD, Store, canonical, make_schema, salted
from bench._durable_seed import claim, dump, seed
from bench.api import VERIFY

CODES = ["CODE-A", "CODE-B"]
SCAN = {"country": "FR", "city": "Paris", "deviceFingerprint": "device-1", "userAgent": "t/1"}


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "durable.sqlite")
    seed(path, CODES, events=2)
    return path


def _verify(db: str, code: str, scan: dict[str, str] | None = SCAN) -> dict[str, Any]:
    schema = make_schema(Store(db))
    request = SimpleNamespace(client=SimpleNamespace(host="127.0.0.1"))
    result = schema.execute_sync(
        VERIFY, {"code": code, "scan": scan}, context_value={"request": request}
    )
    assert result.errors is None, result.errors
    assert result.data is not None
    verification: dict[str, Any] = result.data["verifyProduct"]
    return verification


def _update(db: str, statement: str, *args: object) -> None:
    connection = sqlite3.connect(db, isolation_level=None)
    try:
        assert connection.execute(statement, args).rowcount == 1
    finally:
        connection.close()


def test_a_genuine_product_is_authentic_and_its_scan_is_recorded_with_its_counters(
    db: str,
) -> None:
    answer = _verify(db, "CODE-A")

    assert answer["result"] == "AUTHENTIC" and answer["authentic"] is True
    assert (answer["signatureValid"], answer["chainIntact"]) == (True, True)
    assert answer["scanCount"] == 1 and answer["warnings"] == []
    assert answer["product"]["brand"] == {"name": "Bench"}
    (scan,) = dump(db, "scans")
    assert scan["device_hash"] == salted("device", "device-1")
    assert scan["ip_hash"] == salted("ip", "127.0.0.1")
    assert (scan["country"], scan["result"]) == ("FR", "AUTHENTIC")
    assert [p["scan_count"] for p in dump(db, "products")] == [1, 0]
    assert [b["scan_count"] for b in dump(db, "brands")] == [1]
    assert [(d["scans"], d["authentic"]) for d in dump(db, "product_days")] == [(1, 1)]
    assert [(d["scans"], d["authentic"]) for d in dump(db, "brand_days")] == [(1, 1)]
    assert dump(db, "outbox") == [], "the outbox row is deleted once the rule has run"


def test_an_unknown_code_records_nothing(db: str) -> None:
    answer = _verify(db, "NO-SUCH-CODE")

    assert (answer["result"], answer["product"], answer["scanCount"]) == ("UNKNOWN", None, 0)
    assert dump(db, "scans") == []


def test_past_the_burst_threshold_one_alert_per_product_and_hour(db: str) -> None:
    for _ in range(BURST_THRESHOLD):
        _verify(db, "CODE-A")
    assert dump(db, "alerts") == [], "the threshold itself raises nothing"

    for _ in range(3):
        _verify(db, "CODE-A")

    (alert,) = dump(db, "alerts")
    assert (alert["type"], alert["scans"]) == ("BURST_SCAN", BURST_THRESHOLD + 1)
    assert dump(db, "outbox") == []


def test_an_altered_event_breaks_the_chain(db: str) -> None:
    _update(db, "UPDATE events SET location = 'Lyon' WHERE sequence = 2 AND product_id = "
            "(SELECT id FROM products WHERE code = 'CODE-A')")  # fmt: skip

    answer = _verify(db, "CODE-A")

    assert (answer["result"], answer["chainIntact"]) == ("SUSPICIOUS", False)
    assert answer["warnings"] == ["The provenance history has been altered or is incomplete."]
    assert _verify(db, "CODE-B")["chainIntact"] is True, "the other product's chain is intact"


def test_a_cut_tail_breaks_the_chain_against_the_head(db: str) -> None:
    _update(db, "DELETE FROM events WHERE sequence = 2 AND product_id = "
            "(SELECT id FROM products WHERE code = 'CODE-A')")  # fmt: skip

    assert _verify(db, "CODE-A")["chainIntact"] is False


def test_a_forged_signature_or_an_altered_record_is_counterfeit(db: str) -> None:
    # Another first character, always: one signature in 64 already began with 'A'.
    _update(db, "UPDATE certificates SET signature = CASE WHEN substr(signature, 1, 1) = 'A' "
            "THEN 'B' ELSE 'A' END || substr(signature, 2) WHERE "
            "product_id = (SELECT id FROM products WHERE code = 'CODE-A')")  # fmt: skip
    _update(db, "UPDATE products SET name = 'Other' WHERE code = 'CODE-B'")

    forged, altered = _verify(db, "CODE-A"), _verify(db, "CODE-B")

    assert (forged["result"], forged["signatureValid"]) == ("COUNTERFEIT", False)
    assert (altered["result"], altered["signatureValid"]) == ("COUNTERFEIT", True)
    assert altered["warnings"] == ["The product record does not match its certificate."]


def test_a_claim_is_compared_with_the_scanning_devices_salted_hash(db: str) -> None:
    claim(db, "CODE-A", salted("device", "device-1"), time.time() + 3600)

    own = _verify(db, "CODE-A")
    other = _verify(db, "CODE-A", {**SCAN, "deviceFingerprint": "device-2"})

    assert (own["result"], own["claimed"], own["isClaimant"]) == ("AUTHENTIC", True, True)
    assert (other["result"], other["isClaimant"]) == ("SUSPICIOUS", False)
    assert "registered to another consumer" in other["warnings"][0]


def test_the_hashes_are_canonical_json_as_the_gateways_are() -> None:
    from domain.canonical import canonical_json

    document = {"b": [1, "é"], "a": None, "c": {"z": True, "y": "\n"}}

    assert canonical(document) == canonical_json(document)
    assert (
        hashlib.sha256(canonical(document)).hexdigest()
        != hashlib.sha256(json.dumps(document).encode()).hexdigest()
    ), "positive control: plain json.dumps spells it otherwise"
