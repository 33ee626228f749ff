"""Items to and from DynamoDB's wire format, in the value model of ``values.py``.

boto3's TypeDeserializer returns every number as a Decimal and binary as a
``Binary`` wrapper; the value model wants int for integral numbers, a normalised
Decimal otherwise, and plain bytes, so both directions are written out here
(and skip boto3's per-value type probing on the hot path).

Responses are read from their JSON as the data plane decodes it (binary in
base64; docs/design.md, DynamoDB data plane); a differential test holds this
reading to botocore's parser followed by the codec as it read botocore's
output before (``tests/_support/botocore_codec.py``).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from decimal import Context, Decimal
from typing import Any

from domain.errors import LimitExceeded

from ..keys import Key
from ..limits import NUMBER_MAX_DIGITS
from ..table import TABLE
from ..values import Item, Value

__all__ = [
    "AttributeValue",
    "decode",
    "decode_item",
    "decode_key",
    "serialize",
    "serialize_item",
    "serialize_key",
    "serialize_strings",
]

AttributeValue = dict[str, Any]

_PK, _SK = TABLE.primary.partition_key, TABLE.primary.sort_key
# The default context keeps 28 digits; DynamoDB stores 38, so rounding there
# would silently change a stored number.
_NUMBERS = Context(prec=NUMBER_MAX_DIGITS)


def serialize(value: Value) -> AttributeValue:
    if isinstance(value, str):
        return {"S": value}
    if isinstance(value, bool):
        return {"BOOL": value}
    if isinstance(value, int):
        return {"N": str(value)}
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise LimitExceeded("NaN and Infinity cannot be stored")
        return {"N": str(value)}
    if value is None:
        return {"NULL": True}
    if isinstance(value, bytes):
        return {"B": value}
    if isinstance(value, Mapping):
        return {"M": {name: serialize(v) for name, v in value.items()}}
    if isinstance(value, (list, tuple)):
        return {"L": [serialize(v) for v in value]}
    raise LimitExceeded(f"Unsupported attribute type {type(value).__name__}")


def serialize_item(item: Mapping[str, Value]) -> dict[str, AttributeValue]:
    return {name: serialize(value) for name, value in item.items()}


def serialize_key(key: Key) -> dict[str, AttributeValue]:
    return {_PK: {"S": key.pk}, _SK: {"S": key.sk}}


def serialize_strings(attributes: Mapping[str, str]) -> dict[str, AttributeValue]:
    """Key maps (ExclusiveStartKey): every key attribute of the table is a string."""
    return {name: {"S": value} for name, value in attributes.items()}


def _number(text: str) -> int | Decimal:
    digits = text[1:] if text[:1] == "-" else text
    if digits.isascii() and digits.isdigit():
        return int(text)
    number = _NUMBERS.create_decimal(text).normalize(_NUMBERS)
    if number == number.to_integral_value():
        return int(number)
    return number


def _string_set(values: list[str]) -> list[str]:
    return sorted(values)


def _number_set(values: list[str]) -> list[int | Decimal]:
    return sorted(_number(v) for v in values)


def _binary(text: str) -> bytes:
    """As botocore reads a blob: the UTF-8 of the text, base64-decoded."""
    return base64.b64decode(bytes(text, "utf-8"))


def _binary_set(values: list[str]) -> list[bytes]:
    return sorted(_binary(v) for v in values)


def _list(values: list[AttributeValue]) -> list[Value]:
    return [decode(v) for v in values]


def _map(values: dict[str, AttributeValue]) -> dict[str, Value]:
    return {name: decode(v) for name, v in values.items()}


def _null(_: bool) -> None:
    return None


# Sets are outside the value model; another writer's set reads back as a sorted list.
_DECODERS: dict[str, Callable[[Any], Value]] = {
    "N": _number,
    "BOOL": bool,
    "NULL": _null,
    "B": _binary,
    "M": _map,
    "L": _list,
    "SS": _string_set,
    "NS": _number_set,
    "BS": _binary_set,
}


def decode(value: AttributeValue) -> Value:
    """One AttributeValue as the response's JSON holds it (binary in base64)."""
    for tag, raw in value.items():
        if tag == "S":
            return raw
        return _DECODERS[tag](raw)
    raise ValueError("Empty AttributeValue")


def decode_item(item: Mapping[str, AttributeValue]) -> Item:
    """Most attributes are strings: those skip ``decode``'s call (a page of 50
    products decodes a sixth faster)."""
    decoded: Item = {}
    for name, value in item.items():
        text = value.get("S")
        decoded[name] = text if text is not None else decode(value)
    return decoded


def decode_key(key: Mapping[str, AttributeValue]) -> Key:
    return Key(key[_PK]["S"], key[_SK]["S"])
