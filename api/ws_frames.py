"""WebSocket messages as JSON text, a payload shared by many sockets encoded once.

An alert fanned out to the subscribers of one operation and visibility gives
each of them a result over the same ``data`` object (``api/execution/fanout.py``).
Their ``next`` (or legacy ``data``) messages differ only in the operation id,
so the payload ``{"data": ...}`` is encoded once and each message is put
together around it, in the message's own key order: the text is exactly
what encoding the whole message gives (docs/design.md, Alert fan-out). A
message with errors or extensions, whose payload is the subscriber's own
(errors carry its request id), is encoded whole, as is anything orjson
refuses, so the standard library's fallback encodes it as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from .json_response import encode_json

__all__ = ["SHARED_PAYLOADS", "SHARED_PAYLOAD_BYTES", "SharedPayloads", "encode_message"]

SHARED_PAYLOAD_BYTES = 1024 * 1024
"""What the encoded payloads kept for the next sockets may take together."""
SHARED_PAYLOADS = 64
"""Payloads kept: each holds its data, so a few alerts' worth."""
_LARGEST_SHARED = SHARED_PAYLOAD_BYTES // 8


class SharedPayloads:
    """Encoded ``{"data": ...}`` payloads by the identity of their data.

    Each entry holds its data, so the id cannot be reused while the entry
    lives; oldest first out, within ``max_items`` and ``max_bytes``."""

    def __init__(
        self, max_items: int = SHARED_PAYLOADS, max_bytes: int = SHARED_PAYLOAD_BYTES
    ) -> None:
        self.max_items = max_items
        self.max_bytes = max_bytes
        self.bytes = 0
        self.encoded = 0
        self.shared = 0
        self._entries: dict[int, tuple[object, str, int]] = {}

    def payload(self, data: object) -> str | None:
        """``{"data": data}`` as text; None if orjson refuses it."""
        entry = self._entries.get(id(data))
        if entry is not None and entry[0] is data:
            self.shared += 1
            return entry[1]
        try:
            encoded = orjson.dumps({"data": data})
        except orjson.JSONEncodeError:
            return None
        self.encoded += 1
        text = encoded.decode()
        if len(encoded) <= min(_LARGEST_SHARED, self.max_bytes):
            self._keep(data, text, len(encoded))
        return text

    def _keep(self, data: object, text: str, size: int) -> None:
        entries = self._entries
        old = entries.pop(id(data), None)
        if old is not None:
            self.bytes -= old[2]
        entries[id(data)] = (data, text, size)
        self.bytes += size
        while self.bytes > self.max_bytes or len(entries) > self.max_items:
            _, _, evicted = entries.pop(next(iter(entries)))
            self.bytes -= evicted

    def __len__(self) -> int:
        return len(self._entries)


def encode_message(message: object, payloads: SharedPayloads) -> str:
    """``encode_json(message)``, with a data-only payload taken from ``payloads``."""
    if type(message) is dict and len(message) == 3:
        payload = message.get("payload")
        if type(payload) is dict and len(payload) == 1 and type(payload.get("data")) is dict:
            text = _around(message, payloads.payload(payload["data"]))
            if text is not None:
                return text
    return encode_json(message)


def _around(message: Mapping[str, Any], payload: str | None) -> str | None:
    if payload is None:
        return None
    parts = []
    try:
        for key, value in message.items():
            if type(key) is not str:
                return None
            encoded = payload if key == "payload" else orjson.dumps(value).decode()
            parts.append(f"{orjson.dumps(key).decode()}:{encoded}")
    except orjson.JSONEncodeError:
        return None
    return "{" + ",".join(parts) + "}"
