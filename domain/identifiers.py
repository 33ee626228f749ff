"""Identifiers, codes, API keys and the salted hashes of personal data.

The generators are pure functions of their inputs (``make_id(now, entropy)``);
``new_*`` wrappers supply the real clock and ``os.urandom``/``secrets`` so tests
can pin both.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import ipaddress
import os
import re
import secrets
from datetime import UTC, datetime, timedelta

from domain.errors import ProofgateError

from .datetimes import utc

__all__ = [
    "API_KEY_PREFIX",
    "CROCKFORD_ALPHABET",
    "ID_ENTROPY_BYTES",
    "ID_LENGTH",
    "SALT_MIN_BYTES",
    "VERIFICATION_CODE_ALPHABET",
    "VERIFICATION_CODE_LENGTH",
    "WEBHOOK_SECRET_PREFIX",
    "canonical_ip",
    "format_verification_code",
    "hash_api_key",
    "hash_device_fingerprint",
    "hash_ip",
    "is_id",
    "make_id",
    "new_api_key",
    "new_id",
    "new_verification_code",
    "new_webhook_secret",
    "parse_verification_code",
    "salted_hash",
]

# --- ids ---------------------------------------------------------------------

CROCKFORD_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
ID_LENGTH = 26
ID_ENTROPY_BYTES = 10
_ENTROPY_BITS = ID_ENTROPY_BYTES * 8
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MILLISECOND = timedelta(milliseconds=1)
_ID = re.compile(f"[0-7][{CROCKFORD_ALPHABET}]{{{ID_LENGTH - 1}}}")
_DIGIT_PAIRS = tuple(high + low for high in CROCKFORD_ALPHABET for low in CROCKFORD_ALPHABET)
_PAIR_SHIFTS = tuple(range(ID_LENGTH * 5 - 10, -1, -10))


def make_id(now: datetime, entropy: bytes) -> str:
    """A ULID: 48 bits of Unix milliseconds then 80 random bits, in Crockford base32.

    Fixed width and time first, so ids sort (as strings and as key bytes) in
    creation order to the millisecond. 48 bits of milliseconds outlast
    ``datetime.max``, so only times before 1970 are out of range.
    """
    if len(entropy) != ID_ENTROPY_BYTES:
        raise ProofgateError(f"An id needs {ID_ENTROPY_BYTES} bytes of entropy, got {len(entropy)}")
    millis = ((now if now.tzinfo is UTC else utc(now)) - _EPOCH) // _MILLISECOND
    if millis < 0:
        raise ProofgateError(f"{now} is before 1970 and cannot be encoded in an id")
    value = millis << _ENTROPY_BITS | int.from_bytes(entropy, "big")
    # Two digits (ten bits) a step, most significant first: 13 lookups rather
    # than 26 divmods, since an id is minted on every scan.
    return "".join([_DIGIT_PAIRS[value >> shift & 0x3FF] for shift in _PAIR_SHIFTS])


def new_id(now: datetime | None = None) -> str:
    return make_id(now or datetime.now(UTC), os.urandom(ID_ENTROPY_BYTES))


def is_id(text: str) -> bool:
    """Canonical spelling only (uppercase), since ids are used verbatim in keys."""
    return _ID.fullmatch(text) is not None


# --- verification codes ------------------------------------------------------

VERIFICATION_CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTVWXYZ"
"""No 0/O, 1/I/L or U: nothing a person can misread off a label, and no accidental words."""
VERIFICATION_CODE_LENGTH = 12
_GROUP = 4
_CODE_INPUT_MAX = 64
_CODE_SEPARATORS = re.compile(r"[\s-]+")


def format_verification_code(chars: str) -> str:
    return "-".join(chars[i : i + _GROUP] for i in range(0, len(chars), _GROUP))


def new_verification_code() -> str:
    """12 characters from a 30-letter alphabet: about 59 bits, grouped ``ABCD-EFGH-JKMN``."""
    return format_verification_code(
        "".join(secrets.choice(VERIFICATION_CODE_ALPHABET) for _ in range(VERIFICATION_CODE_LENGTH))
    )


_CANONICAL_CODE = re.compile(
    "-".join([f"[{VERIFICATION_CODE_ALPHABET}]{{{_GROUP}}}"] * (VERIFICATION_CODE_LENGTH // _GROUP))
)


def parse_verification_code(text: str) -> str | None:
    """The canonical code a person meant, or ``None`` if ``text`` cannot be one.

    Case, spaces and hyphens are forgiven, so ``abcd efgh jkmn`` finds
    ``ABCD-EFGH-JKMN``. ``None`` (not an error) because an unknown code is an
    ordinary answer of ``verifyProduct``. A code already canonical, as a
    scanned label's is, is its own answer: one match rather than the
    general path's five steps, on every verification."""
    if type(text) is str and _CANONICAL_CODE.fullmatch(text) is not None:
        return text
    return _parse_code(text)


def _parse_code(text: str) -> str | None:
    if len(text) > _CODE_INPUT_MAX:
        return None
    chars = _CODE_SEPARATORS.sub("", text).upper()
    if len(chars) != VERIFICATION_CODE_LENGTH or any(
        char not in VERIFICATION_CODE_ALPHABET for char in chars
    ):
        return None
    return format_verification_code(chars)


# --- API keys and secrets ----------------------------------------------------

API_KEY_PREFIX = "pg_"
WEBHOOK_SECRET_PREFIX = "whsec_"
_SECRET_BYTES = 32


def new_api_key() -> str:
    """The prefix makes leaked keys recognisable to secret scanners."""
    return API_KEY_PREFIX + secrets.token_urlsafe(_SECRET_BYTES)


def hash_api_key(key: str) -> str:
    """Unsalted on purpose: the key is 256 random bits, and lookup (AP20) needs a
    deterministic hash."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def new_webhook_secret() -> str:
    """Standard Webhooks' form: the prefix, then the key's standard base64
    (with padding), which the official verifiers decode."""
    return WEBHOOK_SECRET_PREFIX + base64.b64encode(secrets.token_bytes(_SECRET_BYTES)).decode()


# --- salted hashes of personal data -------------------------------------------

SALT_MIN_BYTES = 16


def salted_hash(salt: bytes, purpose: str, value: str) -> str:
    """HMAC-SHA256 keyed by a secret salt: deterministic (so the same device is
    recognised across scans) but not reversible by hashing guesses without the
    salt. ``purpose`` separates domains, so a fingerprint and an IP that happen
    to be equal strings never hash alike."""
    if len(salt) < SALT_MIN_BYTES:
        raise ProofgateError(f"The hashing salt must be at least {SALT_MIN_BYTES} bytes")
    keyed = _keyed(salt, purpose).copy()
    keyed.update(value.encode("utf-8", "surrogatepass"))
    return keyed.hexdigest()


@functools.lru_cache(maxsize=16)
def _keyed(salt: bytes, purpose: str) -> hmac.HMAC:
    """The HMAC keyed by ``salt`` that has read ``purpose`` and its separator:
    copying it costs half of keying a new one, and a process has one salt
    and two purposes (a bounded memo of a pure function)."""
    return hmac.new(salt, purpose.encode("utf-8") + b"\x00", hashlib.sha256)


def hash_device_fingerprint(salt: bytes, fingerprint: str) -> str:
    return salted_hash(salt, "device", fingerprint)


def hash_ip(salt: bytes, ip: str) -> str:
    """Spellings of one address (``::FFFF:1.2.3.4``, ``::ffff:1.2.3.4``) hash alike."""
    return salted_hash(salt, "ip", canonical_ip(ip))


_CANONICAL_IPV4 = re.compile(
    r"(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}"
    r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
)


def canonical_ip(ip: str) -> str:
    """``ipaddress``'s compressed form of ``ip``, or ``ip`` itself when it
    is no address. A dotted quad already in that form (no leading zeros, no
    space) is its own: matched here, as parsing one costs 15 times more."""
    if _CANONICAL_IPV4.fullmatch(ip) is not None:
        return ip
    return _parse_ip(ip) if len(ip) > _IP_MEMO_CHARS else _parsed_ip(ip)


def _parse_ip(ip: str) -> str:
    try:
        return ipaddress.ip_address(ip.strip()).compressed
    except ValueError:
        return ip


_IP_MEMO_CHARS = 64
"""Longer than any address's text (45, and a short zone): memoised no more."""
_parsed_ip = functools.lru_cache(maxsize=1024)(_parse_ip)
"""IPv6 and other spellings, whose parse costs 10-15 us: clients scan again."""
