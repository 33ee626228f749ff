"""Responses encoded by orjson, falling back to the standard library for what
orjson refuses, so every body the gateway sent before it still sends.

orjson refuses an integer beyond 64 bits and a non-string key (``json``
writes both); it writes a NaN or infinite float as ``null`` where ``json``
writes the invalid token ``NaN``. GraphQL's scalars never produce either:
``Int`` is 32-bit and ``Float`` refuses non-finite values.

A value that offers ``json_fragment()`` (a kept page's projected edges,
served to many requests: ``api/graphql/execution/encoded.py``,
docs/design.md, Projected pages) is written as the bytes it encoded once.
To see it, the encoders pass every subclass of a builtin to ``_plain``,
which writes any other as its builtin would be written.
"""

from __future__ import annotations

import json

import orjson

__all__ = ["encode_json", "encode_json_bytes"]

_OPTIONS = orjson.OPT_PASSTHROUGH_SUBCLASS


def _plain(value: object) -> object:
    """A subclass of a builtin, as orjson would write the builtin."""
    fragment = getattr(value, "json_fragment", None)
    if fragment is not None:
        return fragment()
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, list | tuple):
        return list(value)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int(value)
    raise TypeError(f"Type is not JSON serializable: {type(value).__name__}")


def encode_json(data: object) -> str:
    """Text, not bytes: Strawberry sends bytes over a WebSocket as a binary
    frame, which GraphQL-over-WebSocket clients do not read."""
    try:
        return orjson.dumps(data, default=_plain, option=_OPTIONS).decode()
    except orjson.JSONEncodeError:
        return json.dumps(data, separators=(",", ":"))


def encode_json_bytes(data: object) -> bytes:
    """``encode_json(data)`` as the UTF-8 bytes a response sends, encoded once."""
    try:
        return orjson.dumps(data, default=_plain, option=_OPTIONS)
    except orjson.JSONEncodeError:
        return json.dumps(data, separators=(",", ":")).encode()
