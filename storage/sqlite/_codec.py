"""The stored form of an item: compact JSON that round-trips exactly.

Numbers are written as bare JSON numbers and read back with
``parse_float=Decimal``: a stored number is an ``int`` when integral and a
normalised ``Decimal`` (whose text always has a point or an exponent)
otherwise, so both come back as they went in, at the C decoder's speed.

Bytes have no JSON form; they are written as ``{"\\u0000b": base64}`` and a
map key that already starts with NUL gets one more NUL, so no stored map is
ever mistaken for bytes. JSON always escapes NUL, so a row without the text
``\\u0000`` cannot hold a tag and skips the slower, tag-aware decoder.

An item is written by orjson, with its Decimals as fragments of the text
written below, whenever orjson's text is the one ``_encode`` writes: orjson
refuses bytes and integers past 64 bits, and the item then takes ``_encode``,
as does one whose text holds an escaped NUL (a map key that needs its NUL
doubled). Items reach the encoder in the value model (``normalize_item``), so
floats, datetimes and the like, which orjson would write, never do. A
differential test holds orjson's text to ``_encode``'s.

A row without a tag is read by msgspec, several times faster, with its
``float_hook`` making every non-integral number a ``Decimal`` of the stored
text, and integers of any length ``int``, exactly as the standard decoder
with ``parse_float=Decimal`` reads them (a differential test holds the two
together).
"""

from __future__ import annotations

import base64
import json
from decimal import Decimal
from json.encoder import encode_basestring as _encode_str
from typing import Any

import msgspec
import orjson

from domain.errors import LimitExceeded

from ..values import Item, normalize_number

__all__ = ["decode_item", "encode_item"]

_NUL = "\x00"
_BYTES_TAG = _NUL + "b"
_ESCAPED_NUL = "\\u0000"


def _encode_key(key: str) -> str:
    return _encode_str(_NUL + key if key.startswith(_NUL) else key)


def _encode(value: Any) -> str:
    kind = type(value)
    if kind is str:
        return _encode_str(value)
    if kind is int:
        return int.__repr__(value)
    if kind is dict:
        return "{" + ",".join([_encode_key(k) + ":" + _encode(v) for k, v in value.items()]) + "}"
    if kind is list:
        return "[" + ",".join([_encode(v) for v in value]) + "]"
    return _encode_other(value)


def _encode_other(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _encode_str(value)
    if isinstance(value, (int, Decimal)):
        number = normalize_number(value)
        return int.__repr__(number) if isinstance(number, int) else str(number)
    if isinstance(value, bytes):
        return "{" + _encode_str(_BYTES_TAG) + ':"' + base64.b64encode(value).decode("ascii") + '"}'
    if isinstance(value, dict):
        return _encode(dict(value))
    if isinstance(value, (list, tuple)):
        return _encode(list(value))
    raise LimitExceeded(f"Unsupported attribute type {type(value).__name__}")


def _fragment(value: Any) -> orjson.Fragment:
    if isinstance(value, Decimal):
        return orjson.Fragment(_encode_other(value))
    raise TypeError(type(value).__name__)


_ESCAPED_NUL_BYTES = _ESCAPED_NUL.encode()


def encode_item(item: Item) -> str:
    try:
        data = orjson.dumps(item, default=_fragment)
    except TypeError:
        return _encode(item)
    if b"\\" in data and _ESCAPED_NUL_BYTES in data:
        return _encode(item)
    return data.decode()


def _untag(mapping: dict[str, Any]) -> Any:
    if len(mapping) == 1 and _BYTES_TAG in mapping:
        return base64.b64decode(mapping[_BYTES_TAG])
    if any(k.startswith(_NUL) for k in mapping):
        return {k[1:] if k.startswith(_NUL) else k: v for k, v in mapping.items()}
    return mapping


_tagged = json.JSONDecoder(parse_float=Decimal, object_hook=_untag).decode


_untagged = msgspec.json.Decoder(float_hook=Decimal).decode


def decode_item(text: str) -> Item:
    if _ESCAPED_NUL in text:
        tagged: Item = _tagged(text)
        return tagged
    item: Item = _untagged(text)
    return item
