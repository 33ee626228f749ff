"""Frames written on a WebSocket without an ASGI ``send``: what the server
offers in a connection's scope, and what the direct fan-out writes through
(docs/design.md, Alert fan-out). uvicorn's protocol offers it
(``api/runtime/http_protocol.py``); the protocol handlers find it
(``api/ws/protocols.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import asyncio

__all__ = [
    "DIRECT_FRAMES",
    "HELD",
    "NOT_WRITTEN",
    "WRITTEN",
    "WRITTEN_PAUSED",
    "FrameWriter",
    "IdleAnswer",
    "text_frame",
]

DIRECT_FRAMES = "proofgate.direct_frames"
"""The scope key under which the server puts a connection's ``FrameWriter``
(``api/runtime/http_protocol.py``), when it offers one."""


NOT_WRITTEN, WRITTEN, WRITTEN_PAUSED = 0, 1, 2
"""What ``FrameWriter.write`` did: nothing (the socket is closing or
closed), wrote the frame, or wrote it while the transport asked to pause
(its buffer is full: the caller's slow-consumer rule counts those)."""


HELD = 3
"""What ``FrameWriter.write_ready`` did while the transport asked to pause:
nothing written."""

IdleAnswer = Callable[[bytes, "FrameWriter"], bool]
"""Offered a text message (its UTF-8 bytes) that came in one frame while
the app waits for a message, with the connection's writer: True if it
answered the message, which the app then never receives
(``FrameWriter.answer_idle``)."""


class FrameWriter(Protocol):
    """Writes a text frame on one socket at once, without an ASGI ``send``
    (docs/design.md, Alert fan-out), and answers some messages without the
    app (docs/design.md, Keep-alives)."""

    def write(self, data: bytes, frame: bytes) -> int:
        """A text frame of ``data`` (UTF-8), ``frame`` being its bytes when
        no extension applies (``text_frame(data)``, made once for every
        socket): ``NOT_WRITTEN``, ``WRITTEN`` or ``WRITTEN_PAUSED``."""

    def ready(self) -> asyncio.WriteTransport | None:
        """The socket's transport while a frame may be written on it as it
        is (``text_frame``), now: open, no extension negotiated. Or None:
        ``write`` decides. A caller that writes on it writes the frame at
        once, before the loop runs again, and asks ``paused`` after."""

    def paused(self) -> bool:
        """The transport asked to pause (its buffer is over the mark)."""

    def write_ready(self, data: bytes, frame: bytes) -> int:
        """As ``write``, only while the transport takes more: ``HELD``,
        nothing written, once it asked to pause."""

    def answer_idle(self, answer: IdleAnswer | None) -> None:
        """From now on, each text message that arrives in one frame while the
        app waits for a message (none queued, the transport not paused) is
        offered to ``answer`` first; None stops it."""


def text_frame(data: bytes) -> bytes:
    """A server's final, unmasked text frame of ``data`` (RFC 6455, 5.2)."""
    length = len(data)
    if length < 126:
        return bytes((0x81, length)) + data
    if length < 65536:
        return bytes((0x81, 126)) + length.to_bytes(2, "big") + data
    return bytes((0x81, 127)) + length.to_bytes(8, "big") + data
