from __future__ import annotations

import base64
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.errors import InvalidCursor
from storage.cursor import CursorCodec

KEY = bytes(range(32))
CODEC = CursorCodec(KEY)
LAST = {"PK": "PRODUCT#p1", "SK": "SCAN#2024-05-01T00:00:00.000000Z#s1"}
TOKEN = CODEC.encode("AP10", "PRODUCT#p1", LAST, "brand-1")


def test_round_trip() -> None:
    assert CODEC.decode(TOKEN, "AP10", "PRODUCT#p1", "brand-1") == LAST


@given(
    st.text(min_size=1),
    st.text(min_size=1),
    st.dictionaries(st.text(min_size=1), st.text(), max_size=4),
    st.text(),
)
@settings(max_examples=50)
def test_round_trip_of_any_content(
    ap_id: str, partition: str, last: dict[str, str], tenant: str
) -> None:
    token = CODEC.encode(ap_id, partition, last, tenant)
    assert CODEC.decode(token, ap_id, partition, tenant) == last


def test_tokens_are_url_safe_and_unpadded() -> None:
    for _ in range(20):
        token = CODEC.encode("AP10", "PRODUCT#p1", {"PK": "é" * 40, "SK": "~" * 41}, "t")
        assert re.fullmatch(r"[A-Za-z0-9_-]+", token)


def test_same_content_encrypts_differently() -> None:
    assert CODEC.encode("AP10", "PRODUCT#p1", LAST, "brand-1") != TOKEN


def _flip(token: str, position: int) -> str:
    raw = bytearray(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    raw[position] ^= 0x01
    return base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode()


def test_a_flipped_bit_in_any_byte_is_refused() -> None:
    length = len(base64.urlsafe_b64decode(TOKEN + "=" * (-len(TOKEN) % 4)))
    for position in range(length):
        with pytest.raises(InvalidCursor):
            CODEC.decode(_flip(TOKEN, position), "AP10", "PRODUCT#p1", "brand-1")


def test_any_changed_character_is_refused() -> None:
    alphabet = "AQgw-_"
    for position in range(len(TOKEN)):
        for char in alphabet:
            if char == TOKEN[position]:
                continue
            tampered = TOKEN[:position] + char + TOKEN[position + 1 :]
            with pytest.raises(InvalidCursor):
                CODEC.decode(tampered, "AP10", "PRODUCT#p1", "brand-1")


@pytest.mark.parametrize("extra", ["=", "==", "!", " ", "\n", "+", "A"])
def test_appended_or_inserted_characters_are_refused(extra: str) -> None:
    with pytest.raises(InvalidCursor):
        CODEC.decode(TOKEN + extra, "AP10", "PRODUCT#p1", "brand-1")
    with pytest.raises(InvalidCursor):
        CODEC.decode(TOKEN[:5] + extra + TOKEN[5:], "AP10", "PRODUCT#p1", "brand-1")


def test_truncation_is_refused() -> None:
    for cut in (1, 4, len(TOKEN) // 2, len(TOKEN) - 1):
        with pytest.raises(InvalidCursor):
            CODEC.decode(TOKEN[:cut], "AP10", "PRODUCT#p1", "brand-1")


def test_another_key_cannot_read_it() -> None:
    with pytest.raises(InvalidCursor):
        CursorCodec(bytes(32)).decode(TOKEN, "AP10", "PRODUCT#p1", "brand-1")


@pytest.mark.parametrize(
    ("ap_id", "partition", "tenant"),
    [
        ("AP09", "PRODUCT#p1", "brand-1"),
        ("AP10", "PRODUCT#p2", "brand-1"),
        ("AP10", "PRODUCT#p1", "brand-2"),
        ("AP10", "PRODUCT#p1", ""),
    ],
)
def test_foreign_pattern_partition_or_tenant_is_refused(
    ap_id: str, partition: str, tenant: str
) -> None:
    with pytest.raises(InvalidCursor):
        CODEC.decode(TOKEN, ap_id, partition, tenant)


@pytest.mark.parametrize(
    "token",
    [
        "",
        "=",
        "A",
        "AAAA",
        "not base64!",
        "é",
        "\x00",
        "AQ",
        "Ag" + "A" * 40,
        base64.urlsafe_b64encode(b"\x01" * 13).decode(),
    ],
)
def test_garbage_is_refused(token: str) -> None:
    with pytest.raises(InvalidCursor):
        CODEC.decode(token, "AP10", "PRODUCT#p1", "brand-1")


@given(st.text(max_size=200))
@settings(max_examples=100)
def test_arbitrary_text_is_refused_without_other_errors(token: str) -> None:
    with pytest.raises(InvalidCursor):
        CODEC.decode(token, "AP10", "PRODUCT#p1", "brand-1")


def test_invalid_cursor_is_bad_user_input_with_a_hint() -> None:
    with pytest.raises(InvalidCursor) as raised:
        CODEC.decode("junk", "AP10", "PRODUCT#p1", "brand-1")
    assert raised.value.code == "BAD_USER_INPUT"
    assert raised.value.hint


@pytest.mark.parametrize("size", [0, 8, 31, 33])
def test_key_size_is_checked(size: int) -> None:
    with pytest.raises(ValueError):
        CursorCodec(bytes(size))


@pytest.mark.parametrize("size", [16, 24, 32])
def test_aes_key_sizes_are_accepted(size: int) -> None:
    codec = CursorCodec(bytes(size))
    assert codec.decode(codec.encode("a", "p", {}, "t"), "a", "p", "t") == {}
    assert len(CursorCodec.generate_key()) == 32
