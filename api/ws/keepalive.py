"""Keep-alives below Strawberry's handler (docs/design.md, Keep-alives).

Every ``PROOFGATE_WS_KEEPALIVE_MS`` each acknowledged connection is sent the
protocol's keep-alive (graphql-transport-ws ``ping``, legacy graphql-ws
``ka``), and a graphql-transport-ws client answers each ping with a
``pong``. Through Strawberry's handler a ping is an ASGI ``send`` awaited
per socket and its pong a message the handler's task wakes up to decode and
then ignores: about 105 us of the gateway's CPU per socket per round, ten
times an alert's write. Here (the ``keepalive`` lane of
``PROOFGATE_EXECUTION``) the keep-alive is one frame made once and written
on each socket as the fan-out writes (``FrameWriter.write_ready``), and a
``pong`` or a client's ``ping`` that arrives while the handler waits for a
message is answered by the server's protocol as the handler would answer it
(``answer_idle``): a ``pong`` does nothing, a ``ping`` is answered with
``{"type":"pong"}``. Anything else, and either message while the handler is
busy with an earlier one, goes to the handler, so the order of what a client
is sent does not change.
"""

from __future__ import annotations

from dataclasses import dataclass

from api.runtime.direct_frames import FrameWriter, text_frame
from api.wire.json_response import encode_json
from api.wire.request_json import MalformedJSON, decode_request_json

__all__ = ["KA", "PING", "PONG", "SMALL_MESSAGE_BYTES", "Keepalive", "answer_idle"]


@dataclass(frozen=True, slots=True)
class Keepalive:
    """A message the handler would send, encoded as it encodes it, and its frame."""

    data: bytes
    frame: bytes

    @classmethod
    def of(cls, kind: str) -> Keepalive:
        data = encode_json({"type": kind}).encode()
        return cls(data, text_frame(data))


PING = Keepalive.of("ping")
PONG = Keepalive.of("pong")
KA = Keepalive.of("ka")

SMALL_MESSAGE_BYTES = 256
"""Larger messages are not decoded here: a ping or pong in another form
(spaces, a payload) is small, and a ``subscribe`` is decoded once, by the
handler."""


def answer_idle(data: bytes, frames: FrameWriter) -> bool:
    """A graphql-transport-ws ``pong`` or ``ping``, answered as Strawberry's
    ``handle_pong`` and ``handle_ping`` answer it; False for anything else,
    which the handler takes. The message is decoded as the view decodes one
    (``decode_request_json``) unless it is the common form's exact bytes."""
    if data == PONG.data:
        return True
    if data == PING.data:
        frames.write(PONG.data, PONG.frame)
        return True
    if len(data) > SMALL_MESSAGE_BYTES:
        return False
    try:
        kind = decode_request_json(data).get("type")
    except MalformedJSON:
        return False
    if kind == "pong":
        return True
    if kind == "ping":
        frames.write(PONG.data, PONG.frame)
        return True
    return False
