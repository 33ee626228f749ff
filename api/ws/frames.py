"""WebSocket messages as JSON text, a payload shared by many sockets encoded once.

An alert fanned out to the subscribers of one operation and visibility gives
each of them a result over the same ``data`` object (``api/graphql/execution/fanout.py``).
Their ``next`` (or legacy ``data``) messages differ only in the operation id,
so the payload ``{"data": ...}`` is encoded once and orjson writes each
message around it (an ``orjson.Fragment``): the text is exactly what
encoding the whole message gives (docs/design.md, Alert fan-out). A
message with errors or extensions, whose payload is the subscriber's own
(errors carry its request id), is encoded whole, as is anything orjson
refuses, so the standard library's fallback encodes it as before.
"""

from __future__ import annotations

import orjson

from api.settings.limits import SHARED_PAYLOAD_BYTES
from api.wire.json_response import encode_json

__all__ = ["SHARED_PAYLOADS", "SHARED_PAYLOAD_BYTES", "SharedPayloads", "encode_message"]

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
        self._entries: dict[int, tuple[object, orjson.Fragment, int]] = {}

    def payload(self, data: object) -> orjson.Fragment | None:
        """``{"data": data}`` encoded; None if orjson refuses it."""
        entry = self._entries.get(id(data))
        if entry is not None and entry[0] is data:
            self.shared += 1
            return entry[1]
        try:
            encoded = orjson.dumps({"data": data})
        except orjson.JSONEncodeError:
            return None
        self.encoded += 1
        fragment = orjson.Fragment(encoded)
        if len(encoded) <= min(_LARGEST_SHARED, self.max_bytes):
            self._keep(data, fragment, len(encoded))
        return fragment

    def _keep(self, data: object, fragment: orjson.Fragment, size: int) -> None:
        entries = self._entries
        old = entries.pop(id(data), None)
        if old is not None:
            self.bytes -= old[2]
        entries[id(data)] = (data, fragment, size)
        self.bytes += size
        while self.bytes > self.max_bytes or len(entries) > self.max_items:
            _, _, evicted = entries.pop(next(iter(entries)))
            self.bytes -= evicted

    def __len__(self) -> int:
        return len(self._entries)


def encode_message(message: object, payloads: SharedPayloads) -> str:
    """``encode_json(message)``, with a data-only payload taken from
    ``payloads``: orjson writes the rest of the message around it, in the
    message's own key order."""
    if type(message) is dict and len(message) == 3:
        payload = message.get("payload")
        if type(payload) is dict and len(payload) == 1 and type(payload.get("data")) is dict:
            fragment = payloads.payload(payload["data"])
            if fragment is not None:
                try:
                    return orjson.dumps({**message, "payload": fragment}).decode()
                except orjson.JSONEncodeError:
                    pass
    return encode_json(message)
