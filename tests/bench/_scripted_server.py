"""A one-connection graphql-transport-ws server on 127.0.0.1 that sends
exactly the bytes a test scripts: frames split across writes, several in one
write, 16- and 64-bit lengths, control frames. A real gateway never sends
most of these on purpose, so the client's framing is checked against this.

It checks what the client sends as RFC 6455 asks of a client: a valid
``Sec-WebSocket-Key``, the subprotocol, every frame masked.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import struct
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

__all__ = ["Peer", "frame", "read_frame", "scripted_server"]

_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def frame(opcode: int, payload: bytes) -> bytes:
    """A server frame (unmasked, FIN set), with the shortest length encoding."""
    length = len(payload)
    if length < 126:
        head = struct.pack("!BB", 0x80 | opcode, length)
    elif length <= 0xFFFF:
        head = struct.pack("!BBH", 0x80 | opcode, 126, length)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 127, length)
    return head + payload


def text(message: dict[str, Any]) -> bytes:
    return frame(0x1, json.dumps(message).encode())


async def read_frame(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """(opcode, unmasked payload) of one client frame."""
    first, second = await reader.readexactly(2)
    assert first & 0x80, "the client fragments a message"
    assert second & 0x80, "a client frame is not masked"
    length = second & 0x7F
    if length == 126:
        (length,) = struct.unpack("!H", await reader.readexactly(2))
    elif length == 127:
        (length,) = struct.unpack("!Q", await reader.readexactly(8))
    mask = await reader.readexactly(4)
    payload = await reader.readexactly(length)
    return first & 0x0F, bytes(byte ^ mask[i % 4] for i, byte in enumerate(payload))


async def _upgrade(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    head = (await reader.readuntil(b"\r\n\r\n")).decode()
    lines = head.split("\r\n")
    assert lines[0] == "GET /graphql HTTP/1.1", lines[0]
    headers = {
        name.strip().lower(): value.strip()
        for name, _, value in (line.partition(":") for line in lines[1:] if line)
    }
    assert headers["sec-websocket-protocol"] == "graphql-transport-ws"
    assert headers["sec-websocket-version"] == "13"
    key = headers["sec-websocket-key"]
    assert len(base64.b64decode(key, validate=True)) == 16
    accept = base64.b64encode(hashlib.sha1((key + _GUID).encode()).digest()).decode()
    writer.write(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Accept: {accept}\r\n"
        "Sec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n".encode()
    )
    await writer.drain()


class Peer:
    """The server's end of one client connection, past the handshake: what
    the client sent in ``connection_init`` and ``subscribe``."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.init: dict[str, Any] = {}
        self.subscribe: dict[str, Any] = {}

    async def send(self, *pieces: bytes, pause: float = 0.0) -> None:
        """Each piece in its own write; ``pause`` between them so the client
        reads them apart."""
        for index, piece in enumerate(pieces):
            if index and pause:
                await asyncio.sleep(pause)
            self.writer.write(piece)
            await self.writer.drain()

    async def receive(self) -> tuple[int, bytes]:
        return await read_frame(self.reader)

    async def handshake(self) -> None:
        await _upgrade(self.reader, self.writer)
        opcode, init = await self.receive()
        assert opcode == 0x1
        self.init = json.loads(init)
        await self.send(text({"type": "connection_ack"}))
        opcode, subscribe = await self.receive()
        assert opcode == 0x1
        self.subscribe = json.loads(subscribe)


Script = Callable[[Peer], Awaitable[None]]


@asynccontextmanager
async def scripted_server(script: Script) -> AsyncIterator[tuple[int, asyncio.Future[None]]]:
    """The port to connect to, and a future that holds the script's outcome
    (its assertion errors included)."""
    outcome: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = Peer(reader, writer)
        try:
            await peer.handshake()
            await script(peer)
        except Exception as error:  # handed to the test through the future
            if not outcome.done():
                outcome.set_exception(error)
        else:
            if not outcome.done():
                outcome.set_result(None)
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1], outcome
    finally:
        server.close()
        await server.wait_closed()
