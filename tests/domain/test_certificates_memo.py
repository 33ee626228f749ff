"""``verify_signature`` remembers its verdict by the key's raw bytes, the
signature text and the hash text (docs/design.md, Verify path). Against the
plain check, kept here as the oracle (decode, then ``cryptography`` with no
memo), on certificates tampered in every input, each asked twice so the
second answer comes from the memo."""

from __future__ import annotations

import base64
import binascii

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.certificates import Certificate, sign_hash, verify_signature
from domain.signing import ALGORITHM, KeyRing, SigningKey
from domain.verdicts import BY_TEXT

SIGNERS = [
    SigningKey.from_private_key(Ed25519PrivateKey.from_private_bytes(bytes([n]) * 32))
    for n in (1, 2)
]
HASHES = ["0" * 64, "ab" * 32, "f" * 64]


def plain(certificate: Certificate, ring: KeyRing) -> bool:
    key = ring.keys.get(certificate.key_id)
    if key is None or certificate.algorithm != ALGORITHM:
        return False
    text, hash_hex = certificate.signature, certificate.hash
    if len(hash_hex) != 64 or any(c not in "0123456789abcdef" for c in hash_hex):
        return False
    if any(
        c not in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_" for c in text
    ):
        return False
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return False
    if base64.urlsafe_b64encode(raw).rstrip(b"=").decode() != text:
        return False
    try:
        key.public_key.verify(raw, bytes.fromhex(hash_hex))
    except InvalidSignature:
        return False
    return True


def _tamper(text: str, where: int, to: str) -> str:
    where %= max(len(text), 1)
    return text[:where] + to + text[where + 1 :]


@st.composite
def certificates(draw: st.DrawFn) -> Certificate:
    signer = draw(st.sampled_from(SIGNERS))
    certificate = sign_hash(draw(st.sampled_from(HASHES)), signer)
    field = draw(st.sampled_from(["none", "signature", "hash", "key", "padding"]))
    where, to = draw(st.integers(0, 90)), draw(st.sampled_from(list("Aa0_-=F9 ")))
    if field == "signature":
        return Certificate(certificate.hash, _tamper(certificate.signature, where, to), signer.kid)
    if field == "hash":
        return Certificate(_tamper(certificate.hash, where, to), certificate.signature, signer.kid)
    if field == "key":
        other = SIGNERS[1] if signer is SIGNERS[0] else SIGNERS[0]
        return Certificate(certificate.hash, certificate.signature, other.kid)
    if field == "padding":
        return Certificate(certificate.hash, certificate.signature + "==", signer.kid)
    return certificate


@settings(max_examples=300)
@given(certificates())
def test_the_remembered_verdict_is_the_plain_check(certificate: Certificate) -> None:
    ring = KeyRing.of(SIGNERS[0], [SIGNERS[1].verifying_key])
    expected = plain(certificate, ring)
    assert verify_signature(certificate, ring) is expected
    assert verify_signature(certificate, ring) is expected


def test_a_verdict_never_serves_a_changed_input() -> None:
    signer, other = SIGNERS
    good = sign_hash("ab" * 32, signer)
    ring = KeyRing.of(signer)
    assert verify_signature(good, ring)
    assert not verify_signature(Certificate("ab" * 31 + "ac", good.signature, signer.kid), ring)
    assert not verify_signature(
        Certificate(good.hash, _tamper(good.signature, 5, "B"), signer.kid), ring
    )
    # The same kid naming another key's bytes: the verdict is not reused.
    impostor = KeyRing(signer, {signer.kid: other.verifying_key})
    assert not verify_signature(good, impostor)


def test_a_stored_value_of_another_type_is_a_verdict_not_an_error() -> None:
    good = sign_hash("ab" * 32, SIGNERS[0])
    ring = KeyRing.of(SIGNERS[0])
    assert not verify_signature(Certificate(good.hash, 12, good.key_id), ring)  # type: ignore[arg-type]
    assert not verify_signature(Certificate({"h": 1}, good.signature, good.key_id), ring)  # type: ignore[arg-type]


def test_text_longer_than_any_signature_is_checked_but_not_remembered() -> None:
    """The memo's entries stay small whatever a tampered item holds; the
    verdict on such text is still the plain check's."""
    good = sign_hash("ab" * 32, SIGNERS[0])
    ring = KeyRing.of(SIGNERS[0])
    BY_TEXT.clear()
    padded = Certificate(good.hash, good.signature + "A" * 10_000, good.key_id)
    assert verify_signature(padded, ring) is plain(padded, ring) is False
    assert len(BY_TEXT) == 0
    assert verify_signature(good, ring)
    assert len(BY_TEXT) == 1
