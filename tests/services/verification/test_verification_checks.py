"""Certificate checks on stored products: a damaged record is a failed check,
never an exception."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from domain.certificates import CertificateCheck, CertificateRecord, issue_certificate
from domain.datetimes import format_datetime
from domain.errors import BadUserInput
from domain.signing import KeyRing, SigningKey
from resolvers.verification.inputs import ScanInput
from services.verification.checks import check_certificate
from services.verification.drafts import ScanDraft

SIGNER = SigningKey.generate()
RING = KeyRing.of(SIGNER)
CREATED = datetime(2030, 2, 3, 4, 5, 6, 789, tzinfo=UTC)


def product() -> dict[str, Any]:
    record = CertificateRecord("P1", "B1", "Trail Shoe", CREATED, sku="TS-1", metadata={"size": 42})
    certificate = issue_certificate(record, SIGNER)
    return {
        "id": "P1",
        "brandId": "B1",
        "name": "Trail Shoe",
        "sku": "TS-1",
        "metadata": {"size": 42},
        "createdAt": format_datetime(CREATED),
        "certificateHash": certificate.hash,
        "signature": certificate.signature,
        "keyId": certificate.key_id,
        "algorithm": certificate.algorithm,
    }


def test_an_untouched_product_passes_both_checks() -> None:
    assert check_certificate(product(), RING).valid


def test_a_key_the_ring_does_not_hold_fails_the_signature() -> None:
    check = check_certificate(product(), KeyRing.of(SigningKey.generate()))
    assert check.hash_valid and not check.signature_valid


@pytest.mark.parametrize(
    ("attribute", "value", "hash_ok", "signature_ok"),
    [
        ("name", "Trail Shoe ", False, True),
        ("sku", None, False, True),
        ("metadata", {"size": 43}, False, True),
        ("metadata", "not an object", False, True),
        ("createdAt", "not a time", False, True),
        ("brandId", "B2", False, True),
        ("certificateHash", "00" * 32, False, False),
        ("signature", "!!!", True, False),
        ("keyId", "unknown", True, False),
        ("algorithm", "RS256", True, False),
    ],
)
def test_any_altered_attribute_fails_a_check(
    attribute: str, value: Any, hash_ok: bool, signature_ok: bool
) -> None:
    altered = {**product(), attribute: value}
    check = check_certificate(altered, RING)
    assert (check.hash_valid, check.signature_valid) == (hash_ok, signature_ok)


def test_missing_attributes_fail_both_checks() -> None:
    check = check_certificate({}, RING)
    assert not check.hash_valid and not check.signature_valid


def test_a_record_that_parses_without_its_certificate_fails_both() -> None:
    """No certificate to compare the record's hash with: the hash fails too."""
    unsigned = {k: v for k, v in product().items() if k != "signature"}
    assert check_certificate(unsigned, RING) == CertificateCheck(False, False)


def test_scan_input_is_optional_and_normalised() -> None:
    assert ScanDraft.validate(None) == ScanDraft()
    draft = ScanDraft.validate(ScanInput(country="jp", city="Ōsaka", device_fingerprint="d1"))
    assert (draft.country, draft.city, draft.device_fingerprint) == ("JP", "Ōsaka", "d1")


@pytest.mark.parametrize(
    ("field", "scan", "path"),
    [
        ("scan", ScanInput(city="\x00"), "scan.city"),
        ("scan", ScanInput(country="XX"), "scan.country"),
        ("scan", ScanInput(device_fingerprint=""), "scan.deviceFingerprint"),
        ("input", ScanInput(user_agent="\ud800"), "input.userAgent"),
    ],
)
def test_scan_input_errors_name_the_field(field: str, scan: ScanInput, path: str) -> None:
    with pytest.raises(BadUserInput) as raised:
        ScanDraft.validate(scan, field=field)
    assert raised.value.message.startswith(f"{path}: ")
