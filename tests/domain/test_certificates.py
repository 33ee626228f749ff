from __future__ import annotations

import base64
import hashlib
from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import load_pem_public_key

from domain.certificates import (
    Certificate,
    CertificateRecord,
    issue_certificate,
    sign_hash,
    verify_certificate,
)
from domain.signing import KeyRing, SigningKey

CREATED = datetime(2026, 11, 29, 12, 0, 0, 123456, UTC)


@pytest.fixture(scope="module")
def signer() -> SigningKey:
    return SigningKey.from_private_key(Ed25519PrivateKey.from_private_bytes(b"\x07" * 32))


@pytest.fixture
def record() -> CertificateRecord:
    return CertificateRecord(
        product_id="01JD8X3V9Q7ZK5M2N4P6R8T0W1",
        brand_id="01JD8X0000000000000000BRND",
        name="Montre Étoile",
        created_at=CREATED,
        sku="ET-001",
        metadata={"size": {"mm": 40, "band": "cuir"}, "color": "noir", "limited": True},
    )


def test_third_party_verifies_with_only_the_public_key(
    record: CertificateRecord, signer: SigningKey
) -> None:
    certificate = issue_certificate(record, signer)
    published_pem = signer.public_key_pem
    # What a verifier rebuilds from the API answer (docs/design.md, Certificates).
    document = (
        '{"brandId":"01JD8X0000000000000000BRND",'
        '"createdAt":"2026-11-29T12:00:00.123456Z",'
        '"metadata":{"color":"noir","limited":true,"size":{"band":"cuir","mm":40}},'
        '"name":"Montre Étoile",'
        '"productId":"01JD8X3V9Q7ZK5M2N4P6R8T0W1",'
        '"sku":"ET-001"}'
    )
    digest = hashlib.sha256(document.encode("utf-8")).digest()
    assert certificate.hash == digest.hex()

    public_key = load_pem_public_key(published_pem.encode("ascii"))
    assert isinstance(public_key, Ed25519PublicKey)
    signature = base64.urlsafe_b64decode(
        certificate.signature + "=" * (-len(certificate.signature) % 4)
    )
    public_key.verify(signature, digest)
    with pytest.raises(InvalidSignature):
        public_key.verify(signature, digest.hex().encode())
    assert certificate.key_id == hashlib.sha256(public_key.public_bytes_raw()).hexdigest()[:16]
    assert certificate.algorithm == "Ed25519"


def test_absent_sku_is_null_and_absent_metadata_is_empty_object() -> None:
    record = CertificateRecord(product_id="p", brand_id="b", name="n", created_at=CREATED)
    expected = (
        b'{"brandId":"b","createdAt":"2026-11-29T12:00:00.123456Z",'
        b'"metadata":{},"name":"n","productId":"p","sku":null}'
    )
    assert record.canonical_bytes() == expected
    assert record.hash() == hashlib.sha256(expected).hexdigest()
    assert replace(record, metadata={}).hash() == record.hash()
    assert replace(record, sku="").hash() != record.hash()


def test_signature_is_unpadded_base64url_of_64_bytes(
    record: CertificateRecord, signer: SigningKey
) -> None:
    certificate = issue_certificate(record, signer)
    assert len(certificate.signature) == 86
    assert set(certificate.signature) <= set(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    )


def test_hash_survives_a_store_round_trip(record: CertificateRecord) -> None:
    """A store that normalises numbers (2.0 -> 2) and reorders keys changes nothing."""
    stored = replace(
        record,
        metadata={
            "limited": True,
            "color": "noir",
            "size": {"band": "cuir", "mm": Decimal("40.0")},
        },
    )
    assert stored.hash() == record.hash()


def test_created_at_offset_is_normalised_to_utc(record: CertificateRecord) -> None:
    from datetime import timedelta, timezone

    shifted = replace(record, created_at=CREATED.astimezone(timezone(timedelta(hours=-5))))
    assert shifted.hash() == record.hash()
    assert replace(record, created_at=CREATED.replace(microsecond=0)).hash() != record.hash()


def test_valid_certificate_verifies(record: CertificateRecord, signer: SigningKey) -> None:
    certificate = issue_certificate(record, signer)
    check = verify_certificate(record, certificate, KeyRing.of(signer))
    assert (check.hash_valid, check.signature_valid, check.valid) == (True, True, True)
    mapping_check = verify_certificate(record, certificate, {signer.kid: signer.verifying_key})
    assert mapping_check.valid


@pytest.mark.parametrize(
    "change",
    [
        {"name": "Montre Etoile"},
        {"sku": None},
        {"sku": "ET-002"},
        {"brand_id": "01JD8X0000000000000000BRNE"},
        {"product_id": "01JD8X3V9Q7ZK5M2N4P6R8T0W2"},
        {"created_at": CREATED.replace(microsecond=123457)},
        {"metadata": {"size": {"mm": 41, "band": "cuir"}, "color": "noir", "limited": True}},
        {"metadata": None},
    ],
)
def test_altered_record_fails_the_hash_only(
    record: CertificateRecord, signer: SigningKey, change: dict[str, object]
) -> None:
    certificate = issue_certificate(record, signer)
    check = verify_certificate(replace(record, **change), certificate, KeyRing.of(signer))  # type: ignore[arg-type]
    assert not check.hash_valid
    assert check.signature_valid
    assert not check.valid


def test_forged_signature_fails(record: CertificateRecord, signer: SigningKey) -> None:
    forger = SigningKey.generate()
    forged = replace(issue_certificate(record, forger), key_id=signer.kid)
    check = verify_certificate(record, forged, KeyRing.of(signer))
    assert check.hash_valid
    assert not check.signature_valid


@pytest.mark.parametrize(
    "change",
    [
        {"key_id": "0000000000000000"},
        {"algorithm": "RS256"},
        {"signature": "not base64!"},
        {"signature": ""},
    ],
)
def test_malformed_certificate_fails_the_signature(
    record: CertificateRecord, signer: SigningKey, change: dict[str, str]
) -> None:
    certificate = replace(issue_certificate(record, signer), **change)
    assert not verify_certificate(record, certificate, KeyRing.of(signer)).signature_valid


def test_padded_signature_is_not_accepted(record: CertificateRecord, signer: SigningKey) -> None:
    certificate = issue_certificate(record, signer)
    padded = replace(certificate, signature=certificate.signature + "==")
    assert not verify_certificate(record, padded, KeyRing.of(signer)).signature_valid


def test_substituted_hash_fails_both(record: CertificateRecord, signer: SigningKey) -> None:
    certificate = issue_certificate(record, signer)
    other = replace(certificate, hash=hashlib.sha256(b"other").hexdigest())
    upper = replace(certificate, hash=certificate.hash.upper())
    for bad in (other, upper):
        check = verify_certificate(record, bad, KeyRing.of(signer))
        assert not check.hash_valid
        assert not check.signature_valid


def test_rotation_keeps_old_certificates_valid(
    record: CertificateRecord, signer: SigningKey
) -> None:
    old = issue_certificate(record, signer)
    successor = SigningKey.generate()
    ring = KeyRing.of(successor, [signer.verifying_key])
    new = issue_certificate(record, ring.active)
    assert new.key_id == successor.kid != old.key_id
    assert verify_certificate(record, old, ring).valid
    assert verify_certificate(record, new, ring).valid
    assert not verify_certificate(record, old, KeyRing.of(successor)).signature_valid


def test_sign_hash_signs_the_raw_digest(signer: SigningKey) -> None:
    digest = hashlib.sha256(b"x").hexdigest()
    certificate = sign_hash(digest, signer)
    assert certificate == Certificate(
        hash=digest,
        signature=base64.urlsafe_b64encode(signer.sign(bytes.fromhex(digest))).decode().rstrip("="),
        key_id=signer.kid,
    )
