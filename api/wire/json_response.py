"""Responses encoded by orjson, falling back to the standard library for what
orjson refuses, so every body the gateway sent before it still sends.

orjson refuses an integer beyond 64 bits and a non-string key (``json``
writes both); it writes a NaN or infinite float as ``null`` where ``json``
writes the invalid token ``NaN``. GraphQL's scalars never produce either:
``Int`` is 32-bit and ``Float`` refuses non-finite values.
"""

from __future__ import annotations

import json

import orjson

__all__ = ["encode_json", "encode_json_bytes"]


def encode_json(data: object) -> str:
    """Text, not bytes: Strawberry sends bytes over a WebSocket as a binary
    frame, which GraphQL-over-WebSocket clients do not read."""
    try:
        return orjson.dumps(data).decode()
    except orjson.JSONEncodeError:
        return json.dumps(data, separators=(",", ":"))


def encode_json_bytes(data: object) -> bytes:
    """``encode_json(data)`` as the UTF-8 bytes a response sends, encoded once."""
    try:
        return orjson.dumps(data)
    except orjson.JSONEncodeError:
        return json.dumps(data, separators=(",", ":")).encode()
