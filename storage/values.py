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

from domain.errors import LimitExceeded

from .limits import ITEM_MAX_BYTES, NUMBER_MAX_DIGITS, NUMBER_MAX_EXPONENT, NUMBER_MIN_EXPONENT

__all__ = [
    "Item",
    "Value",
    "attribute_size",
    "item_size",
    "normalize_item",
    "normalize_number",
    "sized_item",
    "value_size",
]

Value: TypeAlias = Any
Item: TypeAlias = dict[str, Any]

_NUMBER_CEILING = 10 ** (NUMBER_MAX_EXPONENT + 1)


def _significant(number: Decimal) -> tuple[int, tuple[int, ...], int]:
    """Sign, digits without trailing zeros, exponent: exact, unlike
    ``Decimal.normalize``, which rounds to the context's 28 digits."""
    sign, digits, exponent = number.as_tuple()
    assert isinstance(exponent, int)
    end = len(digits)
    while end > 1 and digits[end - 1] == 0:
        end -= 1
    return sign, tuple(digits[:end]), exponent + len(digits) - end


_DIGITS_CEILING = 10**NUMBER_MAX_DIGITS
"""An int below this in magnitude has at most ``NUMBER_MAX_DIGITS`` digits
and is far inside the exponent range: every check below passes."""


def normalize_number(number: int | Decimal) -> int | Decimal:
    if type(number) is int and -_DIGITS_CEILING < number < _DIGITS_CEILING:
        return number
    if isinstance(number, bool) or not isinstance(number, (int, Decimal)):
        raise LimitExceeded(f"Numbers are int or Decimal, not {type(number).__name__}")
    if isinstance(number, int):
        if abs(number) >= _NUMBER_CEILING:
            raise LimitExceeded(f"Number magnitude exceeds 1E+{NUMBER_MAX_EXPONENT + 1}")
        if len(str(abs(number)).rstrip("0")) > NUMBER_MAX_DIGITS:
            raise LimitExceeded(f"Number has more than {NUMBER_MAX_DIGITS} significant digits")
        return number
    if not number.is_finite():
        raise LimitExceeded("NaN and Infinity cannot be stored")
    if not number:
        return 0
    sign, digits, exponent = _significant(number)
    if len(digits) > NUMBER_MAX_DIGITS:
        raise LimitExceeded(f"Number has more than {NUMBER_MAX_DIGITS} significant digits")
    adjusted = exponent + len(digits) - 1
    if not NUMBER_MIN_EXPONENT <= adjusted <= NUMBER_MAX_EXPONENT:
        raise LimitExceeded(
            f"Number magnitude outside 1E{NUMBER_MIN_EXPONENT}..1E+{NUMBER_MAX_EXPONENT + 1}"
        )
    if exponent >= 0:
        return int(Decimal((sign, digits, exponent)))
    return Decimal((sign, digits, exponent))


def normalize_value(value: Value) -> Value:
    # Text, then the exact built-in int and dict, as they are nearly every
    # value; the checks below them decide the rest exactly as before.
    if isinstance(value, str):
        _utf8_size(value)
        return value
    kind = type(value)
    if kind is int:
        return normalize_number(value)
    if kind is dict:
        return {_attribute_name(k): normalize_value(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, bytes)):
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
    _utf8_size(name)
    return name


def normalize_item(item: Mapping[str, Value]) -> Item:
    """Return a copy in the canonical value model, refusing what DynamoDB refuses."""
    return sized_item(item)[0]


def sized_item(item: Mapping[str, Value]) -> tuple[Item, int]:
    """``normalize_item`` and the copy's ``item_size``, which a ``Put`` keeps
    so the store and the backend do not measure its item again.

    One walk that checks and measures each value together: normalising and
    then measuring looked at every text twice, and a scan's two Puts are most
    of what recording it costs (docs/design.md, Verify path)."""
    normalized, size = _sized_map(item)
    # An item's size is its members' alone: no braces, no separators.
    size -= 3 + len(normalized)
    if size > ITEM_MAX_BYTES:
        raise LimitExceeded(f"Item size {size} bytes exceeds {ITEM_MAX_BYTES} bytes")
    return normalized, size


def _name_size(name: object) -> int:
    return _utf8_size(_attribute_name(name))


def _sized_value(value: Value) -> tuple[Value, int]:
    """``(normalize_value(value), value_size(...))``, with its checks in its order."""
    if isinstance(value, str):
        return value, _utf8_size(value)
    kind = type(value)
    if kind is dict:
        return _sized_map(value)
    if value is None or isinstance(value, bool):
        return value, 1
    if isinstance(value, bytes):
        return value, len(value)
    if isinstance(value, (int, Decimal)):
        number = normalize_number(value)
        return number, _number_size(number)
    if isinstance(value, float):
        raise LimitExceeded("Floats cannot be stored exactly; use int or Decimal")
    if isinstance(value, Mapping):
        return _sized_map(value)
    if isinstance(value, (list, tuple)):
        normalized: list[Value] = []
        size = 3
        for element in value:
            element, element_bytes = _sized_value(element)
            normalized.append(element)
            size += element_bytes + 1
        return normalized, size
    raise LimitExceeded(f"Unsupported attribute type {type(value).__name__}")


def _sized_map(value: Mapping[Any, Value]) -> tuple[Item, int]:
    normalized: Item = {}
    size = 3
    for name, element in value.items():
        name_bytes = (
            len(name) if type(name) is str and name.isascii() and name else _name_size(name)
        )
        kind = type(element)
        if kind is str:
            element_bytes = len(element) if element.isascii() else _utf8_size(element)
        elif element is None:
            element_bytes = 1
        elif kind is int and -_DIGITS_CEILING < element < _DIGITS_CEILING:
            # What ``_sized_value`` makes of them, without its chain of checks:
            # an item's counters, shards and attempts are small ints.
            element_bytes = (
                _SMALL_INT_SIZES[element] if 0 <= element < _SMALL_INTS else _number_size(element)
            )
        else:
            element, element_bytes = _sized_value(element)
        normalized[name] = element
        size += name_bytes + element_bytes + 1
    return normalized, size


def _utf8_size(text: str) -> int:
    if text.isascii():
        return len(text)
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise LimitExceeded("Strings must be valid Unicode (no lone surrogates)") from None


def _number_size(number: int | Decimal) -> int:
    """One byte per two significant digits, plus one; zero has none."""
    if not number:
        return 1
    if type(number) is int:
        significant = len(str(abs(number)).rstrip("0"))
    else:
        significant = len(_significant(Decimal(number))[1])
    return math.ceil(significant / 2) + 1


_SMALL_INTS = 1024
_SMALL_INT_SIZES = tuple(_number_size(number) for number in range(_SMALL_INTS))
"""``_number_size`` of the small non-negative ints, looked up rather than spelled."""


def value_size(value: Value) -> int:
    kind = type(value)
    if kind is str:
        return _utf8_size(value)
    if kind is int:
        return _SMALL_INT_SIZES[value] if 0 <= value < _SMALL_INTS else _number_size(value)
    if value is None or isinstance(value, bool):
        return 1
    if isinstance(value, str):
        return _utf8_size(value)
    if isinstance(value, bytes):
        return len(value)
    if isinstance(value, (int, Decimal)):
        return _number_size(value)
    if isinstance(value, dict):
        return 3 + sum(_utf8_size(k) + value_size(v) + 1 for k, v in value.items())
    if isinstance(value, list):
        return 3 + sum(value_size(v) + 1 for v in value)
    raise LimitExceeded(f"Unsupported attribute type {type(value).__name__}")


def item_size(item: Mapping[str, Value]) -> int:
    """Bytes as DynamoDB bills them: attribute names plus values."""
    return sum(_utf8_size(k) + value_size(v) for k, v in item.items())


def attribute_size(name: str, value: Value) -> int:
    """One attribute's part of ``item_size``: an item's size is the sum of
    its attributes', so an update re-measures only what it changes."""
    return _utf8_size(name) + value_size(value)
