"""``LeanWebSocketProtocol`` against uvicorn's own websockets sans-I/O
protocol: the same client bytes give the same bytes on the transport, closed
at the same point, and a send waits while the transport is paused, in both;
the lean one keeps neither the handshake's request nor its response."""

from __future__ import annotations

import asyncio
import struct
from typing import Any

import pytest
import uvicorn
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from uvicorn.server import ServerState

from api.runtime.direct_frames import (
    DIRECT_FRAMES,
    NOT_WRITTEN,
    WRITTEN,
    WRITTEN_PAUSED,
    text_frame,
)
from api.runtime.http_protocol import LeanWebSocketProtocol
from tests.api.runtime.test_http_protocol import Transport

UPGRADE = (
    b"GET /graphql HTTP/1.1\r\n"
    b"Host: 127.0.0.1:8000\r\n"
    b"Upgrade: websocket\r\n"
    b"Connection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
    b"Sec-WebSocket-Version: 13\r\n"
    b"Sec-WebSocket-Protocol: graphql-transport-ws\r\n"
    b"X-Extra: kept in the scope\r\n"
    b"\r\n"
)
MASK = b"\x01\x02\x03\x04"


def client_frame(opcode: int, payload: bytes) -> bytes:
    """A masked client frame (RFC 6455, 5.3), short payloads only."""
    assert len(payload) < 126
    masked = bytes(byte ^ MASK[i % 4] for i, byte in enumerate(payload))
    return bytes([0x80 | opcode, 0x80 | len(payload)]) + MASK + masked


async def echo(scope: Any, receive: Any, send: Any) -> None:
    """Accepts, echoes text messages upper-cased, and closes on ``bye``."""
    assert (await receive())["type"] == "websocket.connect"
    headers = {name.lower(): value for name, value in scope["headers"]}
    assert headers[b"x-extra"] == b"kept in the scope"
    await send({"type": "websocket.accept", "subprotocol": scope["subprotocols"][0]})
    while True:
        message = await receive()
        if message["type"] == "websocket.disconnect":
            return
        if message["text"] == "bye":
            await send({"type": "websocket.close", "code": 4000, "reason": "bye"})
            return
        await send({"type": "websocket.send", "text": message["text"].upper()})


async def _served(protocol_class: type[Any], *chunks: bytes) -> tuple[Any, Transport, ServerState]:
    config = uvicorn.Config(echo, ws=protocol_class, lifespan="off", log_config=None)
    config.load()
    state = ServerState()
    protocol = protocol_class(config=config, server_state=state, app_state={})
    transport = Transport()
    protocol.connection_made(transport)
    for chunk in chunks:
        protocol.data_received(chunk)
        for _ in range(5):
            await asyncio.sleep(0)
    return protocol, transport, state


async def _exchange(protocol_class: type[Any], *chunks: bytes) -> list[Any]:
    protocol, transport, state = await _served(protocol_class, *chunks)
    if state.tasks:
        await asyncio.wait(list(state.tasks), timeout=5)
    protocol.connection_lost(None)
    protocol.stop_keepalive()
    return [_without_date(event) for event in transport.bytes_and_closes()]


def _without_date(event: Any) -> Any:
    """The handshake's Date header names the second it was sent."""
    if not isinstance(event, bytes) or b"\r\ndate: " not in event:
        return event
    head, _, rest = event.partition(b"\r\ndate: ")
    return head + rest.partition(b"\r\n")[2].join([b"\r\n", b""])


CONVERSATIONS = {
    "echo then close": (
        UPGRADE,
        client_frame(0x1, b"hello"),
        client_frame(0x1, b"again"),
        client_frame(0x1, b"bye"),
        client_frame(0x8, struct.pack("!H", 4000) + b"bye"),
    ),
    "two messages in one read": (
        UPGRADE + client_frame(0x1, b"one") + client_frame(0x1, b"two"),
        client_frame(0x8, struct.pack("!H", 1000)),
    ),
    "a ping": (UPGRADE, client_frame(0x9, b"p"), client_frame(0x8, struct.pack("!H", 1000))),
    "the client closes": (UPGRADE, client_frame(0x8, struct.pack("!H", 1001) + b"gone")),
}


@pytest.mark.parametrize("name", list(CONVERSATIONS))
async def test_the_same_bytes_as_uvicorns_protocol(name: str) -> None:
    chunks = CONVERSATIONS[name]
    theirs = await _exchange(WebSocketsSansIOProtocol, *chunks)
    ours = await _exchange(LeanWebSocketProtocol, *chunks)
    assert ours == theirs
    assert theirs[0].startswith(b"HTTP/1.1 101 Switching Protocols\r\n")


async def test_a_send_waits_while_the_transport_is_paused() -> None:
    for protocol_class in (WebSocketsSansIOProtocol, LeanWebSocketProtocol):
        protocol, transport, state = await _served(protocol_class, UPGRADE)
        written = len(transport.events)
        protocol.pause_writing()
        protocol.data_received(client_frame(0x1, b"held"))
        for _ in range(10):
            await asyncio.sleep(0)
        assert len(transport.events) == written, protocol_class  # waiting for the resume
        protocol.resume_writing()
        for _ in range(10):
            await asyncio.sleep(0)
        assert transport.events[written:] == [b"\x81\x04HELD"], protocol_class
        protocol.connection_lost(None)
        await asyncio.wait(list(state.tasks), timeout=5)


async def test_the_handshake_is_let_go_once_answered() -> None:
    protocol, transport, state = await _served(LeanWebSocketProtocol, UPGRADE)
    assert transport.events[0].startswith(b"HTTP/1.1 101 ")
    request = protocol.request
    assert "response" in vars(protocol)  # held until the first message
    protocol.data_received(client_frame(0x1, b"x"))
    for _ in range(10):
        await asyncio.sleep(0)
    assert "request" not in vars(protocol)
    assert "response" not in vars(protocol)
    assert len(request.headers) == 0  # what the websockets parser still holds
    assert protocol.queue.empty()
    assert transport.events[-1] == b"\x81\x01X"
    protocol.connection_lost(None)
    await asyncio.wait(list(state.tasks), timeout=5)


@pytest.mark.parametrize("size", [0, 1, 125, 126, 65535, 65536, 70000])
async def test_direct_frames_are_the_bytes_of_websockets_send_text(size: int) -> None:
    protocol, transport, state = await _served(LeanWebSocketProtocol, UPGRADE)
    frames = protocol.scope[DIRECT_FRAMES]
    data = ("é" * size).encode()[:size]
    written = len(transport.events)
    assert frames.write(data, text_frame(data)) == WRITTEN
    protocol.conn.send_text(data)  # the oracle: websockets' own frame of the same text
    oracle = b"".join(protocol.conn.data_to_send())
    assert transport.events[written:] == [oracle] == [text_frame(data)]
    protocol.pause_writing()
    assert frames.write(data, text_frame(data)) == WRITTEN_PAUSED  # written, and said so
    protocol.resume_writing()
    protocol.connection_lost(None)
    # Nothing written once the peer is gone.
    assert frames.write(b"gone", text_frame(b"gone")) == NOT_WRITTEN
    assert [e for e in transport.events[written:] if isinstance(e, bytes)] == [oracle, oracle]
    await asyncio.wait(list(state.tasks), timeout=5)


@pytest.mark.parametrize("ending", ["server closes", "client closes", "connection lost"])
async def test_direct_frames_are_ready_exactly_while_write_would_write(ending: str) -> None:
    """``ready`` reads websockets' state and the transport alone (not
    uvicorn's flags): it says None from the moment ``write`` says
    ``NOT_WRITTEN``, however the socket ends."""
    protocol, transport, state = await _served(LeanWebSocketProtocol, UPGRADE)
    frames = protocol.scope[DIRECT_FRAMES]
    assert frames.ready() is transport
    assert not frames.paused()
    protocol.pause_writing()
    assert frames.paused() and frames.ready() is transport  # still written, and said so
    protocol.resume_writing()
    if ending == "server closes":
        protocol.data_received(client_frame(0x1, b"bye"))  # the app sends a close
    elif ending == "client closes":
        protocol.data_received(client_frame(0x8, struct.pack("!H", 1000)))
    else:
        protocol.connection_lost(None)
    for _ in range(5):
        await asyncio.sleep(0)
    assert frames.ready() is None
    assert frames.write(b"late", text_frame(b"late")) == NOT_WRITTEN
    if ending != "connection lost":
        protocol.connection_lost(None)
    if state.tasks:
        await asyncio.wait(list(state.tasks), timeout=5)
