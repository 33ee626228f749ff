from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import re
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from domain.errors import ProofgateError
from domain.identifiers import (
    CROCKFORD_ALPHABET,
    VERIFICATION_CODE_ALPHABET,
    _parse_code,
    canonical_ip,
    format_verification_code,
    hash_api_key,
    hash_device_fingerprint,
    hash_ip,
    is_id,
    make_id,
    new_api_key,
    new_id,
    new_verification_code,
    new_webhook_secret,
    parse_verification_code,
    salted_hash,
)

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MAX_TIME = datetime.max.replace(tzinfo=UTC)
SALT = b"s" * 16

times = st.datetimes(
    min_value=datetime(1970, 1, 1), max_value=datetime(9999, 1, 1), timezones=st.just(UTC)
)
entropy = st.binary(min_size=10, max_size=10)


def _decode(identifier: str) -> int:
    value = 0
    for char in identifier:
        value = value * 32 + "0123456789ABCDEFGHJKMNPQRSTVWXYZ".index(char)
    return value


def test_id_extremes() -> None:
    assert make_id(EPOCH, bytes(10)) == "0" * 26
    largest = make_id(MAX_TIME, b"\xff" * 10)
    assert largest == make_id(MAX_TIME, b"\xff" * 10)
    assert _decode(largest) >> 80 == (MAX_TIME - EPOCH) // timedelta(milliseconds=1)
    assert largest.endswith("Z" * 16)
    assert _decode("7" + "Z" * 25) == 2**128 - 1


@given(times, entropy)
def test_id_is_time_then_entropy_in_crockford_base32(now: datetime, noise: bytes) -> None:
    identifier = make_id(now, noise)
    assert is_id(identifier)
    millis = (now - EPOCH) // timedelta(milliseconds=1)
    assert _decode(identifier) == millis << 80 | int.from_bytes(noise, "big")


@given(times, times, entropy, entropy)
def test_ids_sort_by_creation_millisecond(a: datetime, b: datetime, x: bytes, y: bytes) -> None:
    ms_a, ms_b = ((t - EPOCH) // timedelta(milliseconds=1) for t in (a, b))
    if ms_a != ms_b:
        assert (make_id(a, x) < make_id(b, y)) == (ms_a < ms_b)


def _make_id_by_divmod(now: datetime, noise: bytes) -> str:
    """The encoding ``make_id`` replaced (26 divmods), kept as its oracle."""
    value = (now - EPOCH) // timedelta(milliseconds=1) << 80 | int.from_bytes(noise, "big")
    chars = []
    for _ in range(26):
        value, digit = divmod(value, 32)
        chars.append(CROCKFORD_ALPHABET[digit])
    return "".join(reversed(chars))


@given(
    st.datetimes(
        min_value=datetime(1970, 1, 2),
        max_value=datetime(9999, 12, 30),
        timezones=st.sampled_from(
            [UTC, timezone(timedelta(hours=-11)), timezone(timedelta(hours=13))]
        ),
    )
    | st.sampled_from([EPOCH, MAX_TIME]),
    entropy | st.sampled_from([bytes(10), b"\xff" * 10]),
)
def test_id_is_the_divmod_encoding(now: datetime, noise: bytes) -> None:
    assert make_id(now, noise) == _make_id_by_divmod(now, noise)


def test_id_refuses_bad_inputs() -> None:
    with pytest.raises(ProofgateError, match="entropy"):
        make_id(EPOCH, bytes(9))
    with pytest.raises(ProofgateError):
        make_id(EPOCH - timedelta(milliseconds=1), bytes(10))


def test_new_id_uses_the_clock_and_randomness() -> None:
    now = datetime(2026, 11, 29, 12, tzinfo=UTC)
    a, b = new_id(now), new_id(now)
    assert a != b
    assert a[:10] == b[:10]
    assert _decode(a) >> 80 == (now - EPOCH) // timedelta(milliseconds=1)
    assert is_id(new_id())


@pytest.mark.parametrize(
    "text",
    [
        "0" * 25,
        "0" * 27,
        "8" + "0" * 25,
        "01jd8x3v9q7zk5m2n4p6r8t0w1",
        "01JD8X3V9Q7ZK5M2N4P6R8T0WI",
    ],
)
def test_is_id_refuses(text: str) -> None:
    assert not is_id(text)


def test_alphabets() -> None:
    assert len(CROCKFORD_ALPHABET) == 32
    assert len(VERIFICATION_CODE_ALPHABET) == 30
    assert not set("01ILOU") & set(VERIFICATION_CODE_ALPHABET)


def test_new_verification_code_shape_and_uniqueness() -> None:
    codes = {new_verification_code() for _ in range(1000)}
    assert len(codes) == 1000
    pattern = re.compile(
        rf"[{VERIFICATION_CODE_ALPHABET}]{{4}}(-[{VERIFICATION_CODE_ALPHABET}]{{4}}){{2}}"
    )
    assert all(pattern.fullmatch(code) for code in codes)
    assert all(parse_verification_code(code) == code for code in codes)


codes = st.text(VERIFICATION_CODE_ALPHABET, min_size=12, max_size=12)


@given(codes)
def test_parse_forgives_case_spaces_and_hyphens(chars: str) -> None:
    code = format_verification_code(chars)
    assert parse_verification_code(code) == code
    assert parse_verification_code(chars.lower()) == code
    assert parse_verification_code(f"  {chars[:6]} - {chars[6:]}\t") == code


_ODD = "abz01OILU \n-_\u0660\uff21"
near_codes = st.builds(
    lambda code, position, char: code[:position] + char + code[position + 1 :],
    codes.map(format_verification_code),
    st.integers(0, 14),
    st.sampled_from([*_ODD, "", "--"]),
)
"""Canonical codes with one character changed, dropped or doubled."""


@given(
    st.one_of(
        near_codes,
        codes.map(format_verification_code),
        codes.map(lambda c: format_verification_code(c).lower()),
        st.text(max_size=20),
    )
)
@example("ABCD-EFGHJKMN")
@example("ABCD-EFGH-JKMN\n")
@example("abcd-efgh-jkmn")
def test_parse_fast_path_agrees_with_the_general_path(text: str) -> None:
    """The canonical-code shortcut answers what the general path answers."""
    assert parse_verification_code(text) == _parse_code(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "ABCD-EFGH-JKM",
        "ABCD-EFGH-JKMNP",
        "ABCD-EFGH-JKL0",
        "ABCD-EFGH-JKMO",
        "ABCD_EFGH_JKMN",
        "ABCD" + " " * 60 + "EFGHJKMN",
    ],
)
def test_parse_refuses(text: str) -> None:
    assert parse_verification_code(text) is None


def test_api_keys() -> None:
    key = new_api_key()
    assert key.startswith("pg_")
    assert len(key) == 46
    assert new_api_key() != key
    assert hash_api_key(key) == hashlib.sha256(key.encode()).hexdigest()
    assert re.fullmatch(r"pg_[A-Za-z0-9_-]{43}", key)


def test_webhook_secret() -> None:
    secret = new_webhook_secret()
    assert secret.startswith("whsec_")
    assert len(secret) == 6 + 44
    assert len(base64.b64decode(secret[6:], validate=True)) == 32
    assert new_webhook_secret() != secret


def test_salted_hash_is_an_hmac_with_domain_separation() -> None:
    expected = hmac.new(SALT, b"device\x00fp-1", hashlib.sha256).hexdigest()
    assert hash_device_fingerprint(SALT, "fp-1") == expected
    assert hash_device_fingerprint(SALT, "fp-1") == hash_device_fingerprint(SALT, "fp-1")
    assert hash_device_fingerprint(b"t" * 16, "fp-1") != expected
    assert hash_ip(SALT, "fp-1") != expected
    assert hash_device_fingerprint(SALT, "fp-2") != expected


@pytest.mark.parametrize("spelling", ["::FFFF:1.2.3.4", "::ffff:1.2.3.4", " ::ffff:1.2.3.4 "])
def test_ip_spellings_hash_alike(spelling: str) -> None:
    assert hash_ip(SALT, spelling) == salted_hash(SALT, "ip", "::ffff:102:304")


def test_unparseable_ip_is_hashed_verbatim() -> None:
    assert hash_ip(SALT, "unknown") == salted_hash(SALT, "ip", "unknown")


def test_short_salt_is_refused() -> None:
    with pytest.raises(ProofgateError, match="salt"):
        hash_ip(b"s" * 15, "1.2.3.4")


def _salted_reference(salt: bytes, purpose: str, value: str) -> str:
    """``salted_hash`` as it was before it copied one keyed HMAC per salt."""
    message = purpose.encode("utf-8") + b"\x00" + value.encode("utf-8", "surrogatepass")
    return hmac.new(salt, message, hashlib.sha256).hexdigest()


@given(
    st.binary(min_size=16, max_size=80),
    st.sampled_from(["device", "ip", "other"]),
    st.text(st.characters(codec=None, exclude_categories=())),
)
def test_salted_hash_matches_a_fresh_hmac(salt: bytes, purpose: str, value: str) -> None:
    """Differential: the copied keyed HMAC against one keyed per call, for
    any salt and text (lone surrogates included), twice, so a copy that
    leaked one value into the next would show."""
    assert salted_hash(salt, purpose, value) == _salted_reference(salt, purpose, value)
    assert salted_hash(salt, purpose, value + "x") == _salted_reference(salt, purpose, value + "x")


def test_a_lone_surrogate_hashes_as_before() -> None:
    assert salted_hash(SALT, "device", "a\udcff") == _salted_reference(SALT, "device", "a\udcff")


def _canonical_reference(ip: str) -> str:
    try:
        return ipaddress.ip_address(ip.strip()).compressed
    except ValueError:
        return ip


_octet = st.integers(0, 255).flatmap(
    lambda n: st.sampled_from([str(n), f"0{n}", f"{n:03d}", f"{n:x}", "-1", "256", "٣"])
)
_spelled_ipv4 = st.lists(_octet, min_size=3, max_size=5).map(".".join)
_addresses = (
    st.ip_addresses()
    .map(str)
    .flatmap(
        lambda text: st.sampled_from(
            [text, text.upper(), f" {text}", f"{text}\n", f"::ffff:{text}"]
        )
    )
)
_noise = st.text(alphabet="0123456789.:abcdefABCDEF%/ -", max_size=50)


@given(st.one_of(_addresses, _spelled_ipv4, _noise, st.text(max_size=80)))
def test_canonical_ip_matches_ipaddress(ip: str) -> None:
    """Differential against ``ipaddress``: canonical dotted quads (the fast
    path), leading zeros, out-of-range and non-ASCII digits, IPv6 in any
    case, spaces, junk (hashed verbatim); twice, the second from the memo."""
    assert canonical_ip(ip) == _canonical_reference(ip)
    assert canonical_ip(ip) == _canonical_reference(ip)
    assert hash_ip(SALT, ip) == salted_hash(SALT, "ip", _canonical_reference(ip))
