"""The item value model shared by both backends, and DynamoDB's size rules.

Items are plain dicts of str, int, Decimal, bool, None, bytes, list and dict.
Numbers come back as int when integral and as a normalised Decimal otherwise,
which is what DynamoDB does to a stored number; floats are refused because they
cannot round-trip exactly.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, TypeAlias

from proofgate.errors import LimitExceeded

from .limits import ITEM_MAX_BYTES, NUMBER_MAX_DIGITS

__all__ = ["Item", "Value", "item_size", "normalize_item", "normalize_number", "value_size"]

Value: TypeAlias = Any
Item: TypeAlias = dict[str, Any]


def normalize_number(number: int | Decimal) -> int | Decimal:
    if isinstance(number, bool):
        raise LimitExceeded("Booleans are not numbers")
    if isinstance(number, int):
        digits = len(str(abs(number)).rstrip("0")) or 1
        if digits > NUMBER_MAX_DIGITS:
            raise LimitExceeded(f"Number has more than {NUMBER_MAX_DIGITS} significant digits")
        return number
    if not number.is_finite():
        raise LimitExceeded("NaN and Infinity cannot be stored")
    normalized = number.normalize()
    if len(normalized.as_tuple().digits) > NUMBER_MAX_DIGITS:
        raise LimitExceeded(f"Number has more than {NUMBER_MAX_DIGITS} significant digits")
    if normalized == normalized.to_integral_value():
        return int(normalized)
    return normalized


def normalize_value(value: Value) -> Value:
    if value is None or isinstance(value, (str, bool, bytes)):
        return value
    if isinstance(value, (int, Decimal)):
        return normalize_number(value)
    if isinstance(value, float):
        raise LimitExceeded("Floats cannot be stored exactly; use int or Decimal")
    if isinstance(value, Mapping):
        return {_attribute_name(k): normalize_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [normalize_value(v) for v in value]
    raise LimitExceeded(f"Unsupported attribute type {type(value).__name__}")


def _attribute_name(name: object) -> str:
    if not isinstance(name, str) or not name:
        raise LimitExceeded("Attribute names must be non-empty strings")
    return name


def normalize_item(item: Mapping[str, Value]) -> Item:
    """Return a copy in the canonical value model, refusing what DynamoDB refuses."""
    normalized = {_attribute_name(k): normalize_value(v) for k, v in item.items()}
    size = item_size(normalized)
    if size > ITEM_MAX_BYTES:
        raise LimitExceeded(f"Item size {size} bytes exceeds {ITEM_MAX_BYTES} bytes")
    return normalized


def _number_size(number: int | Decimal) -> int:
    # DynamoDB: roughly one byte per two significant digits, plus one byte.
    digits = Decimal(number).normalize().as_tuple().digits
    significant = len(digits) if any(digits) else 1
    return math.ceil(significant / 2) + 1


def value_size(value: Value) -> int:
    if value is None or isinstance(value, bool):
        return 1
    if isinstance(value, str):
        return len(value.encode("utf-8"))
    if isinstance(value, bytes):
        return len(value)
    if isinstance(value, (int, Decimal)):
        return _number_size(value)
    if isinstance(value, dict):
        return 3 + sum(len(k.encode("utf-8")) + value_size(v) + 1 for k, v in value.items())
    if isinstance(value, list):
        return 3 + sum(value_size(v) + 1 for v in value)
    raise LimitExceeded(f"Unsupported attribute type {type(value).__name__}")


def item_size(item: Mapping[str, Value]) -> int:
    """Bytes as DynamoDB bills them: attribute names plus values."""
    return sum(len(k.encode("utf-8")) + value_size(v) for k, v in item.items())
