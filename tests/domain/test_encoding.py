from __future__ import annotations

import base64

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.encoding import b64url_decode, b64url_encode, is_sha256_hex


def test_encode_is_urlsafe_without_padding() -> None:
    assert b64url_encode(b"\xfb\xff") == "-_8"
    assert b64url_encode(bytes(64)) == "A" * 85 + "A"


@given(st.binary(max_size=100))
def test_round_trip(data: bytes) -> None:
    text = b64url_encode(data)
    assert "=" not in text
    assert text == base64.urlsafe_b64encode(data).decode().rstrip("=")
    assert b64url_decode(text) == data


@pytest.mark.parametrize("text", ["-_8=", "+/8", "AB", "A", "AAAAA", "AA AA", "é"])
def test_decode_refuses_non_canonical(text: str) -> None:
    assert b64url_decode(text) is None


def test_sha256_hex_shape() -> None:
    assert is_sha256_hex("a" * 64)
    assert not is_sha256_hex("A" * 64)
    assert not is_sha256_hex("a" * 63)
    assert not is_sha256_hex("g" * 64)
