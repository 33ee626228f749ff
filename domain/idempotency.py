"""Request fingerprints for idempotency records.

A retry with the same key must match the original request exactly, so the
fingerprint hashes canonical JSON of the operation name and its arguments.
Values canonical JSON refuses are first spelled as text once: exact decimals as
``decimal_text`` ("1.50" and "1.5" are one amount), datetimes in the API's one
timestamp form, finite floats through their shortest repr.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal
from enum import Enum

from domain.canonical import MAX_NESTING, canonical_json, decimal_text, sha256_hex
from domain.datetimes import format_datetime
from domain.errors import BadUserInput

__all__ = ["request_fingerprint"]

_PLAIN_EXPONENT_MAX = 1000


def _plain(value: object, depth: int) -> object:
    if depth > MAX_NESTING:
        raise BadUserInput(f"Request nested more than {MAX_NESTING} levels")
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise BadUserInput(f"{value!r} is not a finite number")
        value = Decimal(repr(value))
    if isinstance(value, Decimal):
        if value.is_finite() and abs(value.adjusted()) > _PLAIN_EXPONENT_MAX:
            # Plain notation of 1E+999999999 would be a gigabyte of zeros.
            return str(value)
        return decimal_text(value)
    if isinstance(value, datetime):
        return format_datetime(value)
    if isinstance(value, Enum):
        return _plain(value.value, depth + 1)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {key: _plain(item, depth + 1) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item, depth + 1) for item in value]
    return value


def request_fingerprint(operation: str, body: object) -> str:
    """SHA-256 (hex) of the canonical JSON of ``{"operation", "body"}``."""
    return sha256_hex(canonical_json({"operation": operation, "body": _plain(body, 0)}))
