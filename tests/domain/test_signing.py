from __future__ import annotations

import hashlib

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from domain.errors import ProofgateError
from domain.signing import ALGORITHM, KeyRing, SigningKey, VerifyingKey, key_id

SEED = bytes(range(32))


@pytest.fixture
def signer() -> SigningKey:
    return SigningKey.from_private_key(Ed25519PrivateKey.from_private_bytes(SEED))


def test_kid_is_derived_from_the_raw_public_key(signer: SigningKey) -> None:
    raw = Ed25519PrivateKey.from_private_bytes(SEED).public_key().public_bytes_raw()
    assert signer.kid == hashlib.sha256(raw).hexdigest()[:16]
    assert key_id(signer.verifying_key.public_key) == signer.kid
    assert ALGORITHM == "Ed25519"


def test_private_pem_round_trip(signer: SigningKey) -> None:
    pem = signer.private_key_pem()
    assert pem.startswith(b"-----BEGIN PRIVATE KEY-----")
    loaded = SigningKey.from_pem(pem)
    assert loaded.kid == signer.kid
    assert loaded.sign(b"m") == signer.sign(b"m")


def test_public_pem_is_spki_and_verifies(signer: SigningKey) -> None:
    pem = signer.public_key_pem
    assert pem.startswith("-----BEGIN PUBLIC KEY-----")
    public = serialization.load_pem_public_key(pem.encode())
    assert isinstance(public, Ed25519PublicKey)
    public.verify(signer.sign(b"message"), b"message")
    assert VerifyingKey.from_pem(pem.encode()) == signer.verifying_key


def test_verify(signer: SigningKey) -> None:
    signature = signer.sign(b"message")
    assert signer.verifying_key.verify(signature, b"message")
    assert not signer.verifying_key.verify(signature, b"messagE")
    assert not signer.verifying_key.verify(bytes(64), b"message")
    assert not signer.verifying_key.verify(b"short", b"message")


def test_generated_keys_differ() -> None:
    assert SigningKey.generate().kid != SigningKey.generate().kid


def test_repr_never_shows_the_private_key(signer: SigningKey) -> None:
    text = repr(signer)
    assert signer.kid in text
    assert "private_key" not in text


def _ec_pem() -> tuple[bytes, bytes]:
    key = ec.generate_private_key(ec.SECP256R1())
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return private, public


def test_refuses_other_algorithms() -> None:
    private, public = _ec_pem()
    with pytest.raises(ProofgateError, match="expected Ed25519") as info:
        SigningKey.from_pem(private)
    assert info.value.hint is not None
    with pytest.raises(ProofgateError, match="expected Ed25519"):
        VerifyingKey.from_pem(public)


def test_refuses_garbage_and_encrypted_pem(signer: SigningKey) -> None:
    with pytest.raises(ProofgateError, match="Cannot read"):
        SigningKey.from_pem(b"not a key")
    with pytest.raises(ProofgateError, match="Cannot read"):
        VerifyingKey.from_pem(b"not a key")
    encrypted = signer.private_key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"secret"),
    )
    with pytest.raises(ProofgateError, match="Cannot read"):
        SigningKey.from_pem(encrypted)


def test_key_ring_keeps_retired_keys_for_verification(signer: SigningKey) -> None:
    old = SigningKey.generate()
    ring = KeyRing.of(signer, [old.verifying_key])
    assert ring.active is signer
    assert ring.get(old.kid) == old.verifying_key
    assert ring.get(signer.kid) == signer.verifying_key
    assert ring.get("0" * 16) is None
    assert ring.is_active(signer.kid)
    assert not ring.is_active(old.kid)


def test_published_lists_the_active_key_first_then_by_kid(signer: SigningKey) -> None:
    retired = [SigningKey.generate().verifying_key for _ in range(3)]
    ring = KeyRing.of(signer, [*retired, signer.verifying_key])
    published = ring.published()
    assert published[0] == signer.verifying_key
    assert [key.kid for key in published[1:]] == sorted(key.kid for key in retired)
    assert len(published) == 4


def test_keys_compare_by_kid(signer: SigningKey) -> None:
    twin = SigningKey.from_pem(signer.private_key_pem())
    other = SigningKey.generate()
    assert twin == signer
    assert other != signer
    assert signer != signer.verifying_key
    assert len({signer, twin, other}) == 2
    assert len({signer.verifying_key, twin.verifying_key, other.verifying_key}) == 2


def test_a_remembered_verdict_holds_only_for_its_own_key_and_message(
    signer: SigningKey,
) -> None:
    other = SigningKey.generate()
    signature = signer.sign(b"message")
    assert signer.verifying_key.verify(signature, b"message")
    assert signer.verifying_key.verify(signature, b"message")  # the remembered verdict
    assert not other.verifying_key.verify(signature, b"message")
    assert not signer.verifying_key.verify(signature, b"message!")
    assert not signer.verifying_key.verify(bytes(64), b"message")
    assert signer.verifying_key.verify(signature, b"message")


def test_remembered_verdicts_are_bounded_in_bytes(signer: SigningKey) -> None:
    """Messages of every size, the largest past the whole budget: the memo
    holds no more than its bytes, counted from what each key holds, and
    still remembers the recent verdicts (docs/design.md, Memory growth)."""
    from domain.verdicts import BY_BYTES, ENTRY_OVERHEAD

    budget = BY_BYTES.max_bytes
    BY_BYTES.resize(16 * 1024)
    try:
        BY_BYTES.clear()
        signature = signer.sign(b"kept")
        for index in range(2_000):
            message = index.to_bytes(4, "big") * (1 + index % 64)
            assert not signer.verifying_key.verify(bytes(64), message)
            assert BY_BYTES.bytes <= 16 * 1024
        assert not signer.verifying_key.verify(bytes(64), b"x" * 20_000)  # never remembered
        assert signer.verifying_key.verify(signature, b"kept")
        held = len(BY_BYTES)
        assert 16 * 1024 // (ENTRY_OVERHEAD + 32 + 64 + 256) <= held < 2_000
        assert BY_BYTES.bytes <= 16 * 1024
        assert signer.verifying_key.verify(signature, b"kept")
        assert len(BY_BYTES) == held  # the second answer was remembered
    finally:
        BY_BYTES.resize(budget)
        BY_BYTES.clear()


def test_the_budget_is_shared_by_both_memos() -> None:
    from domain.verdicts import BY_BYTES, BY_TEXT, budget, set_budget

    before = budget()
    try:
        set_budget(100_001)
        assert (BY_BYTES.max_bytes, BY_TEXT.max_bytes) == (50_000, 50_001)
    finally:
        set_budget(before)
