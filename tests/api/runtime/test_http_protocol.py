"""``OneWriteHttpProtocol`` against uvicorn's own httptools protocol: for each
exchange, the same bytes reach the transport in the same order, closed at
the same point; a response with a body leaves in one write instead of two."""

from __future__ import annotations

import asyncio
import gc
import weakref
from typing import Any

import pytest
import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from api.runtime.http_protocol import OneWriteHttpProtocol

JSON = b'{"data":{"viewer":{"role":"ANONYMOUS"}}}'


class Transport:
    """What the protocol does to its transport, in order."""

    def __init__(self) -> None:
        self.events: list[Any] = []
        self.closing = False

    def write(self, data: bytes) -> None:
        assert not self.closing, "a write after close"
        self.events.append(bytes(data))

    def close(self) -> None:
        self.events.append("close")
        self.closing = True

    def is_closing(self) -> bool:
        return self.closing

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 5000)}.get(name, default)

    def pause_reading(self) -> None: ...

    def resume_reading(self) -> None: ...

    def set_protocol(self, protocol: Any) -> None: ...

    def bytes_and_closes(self) -> list[Any]:
        """The written bytes joined between closes: what a peer can tell apart."""
        joined: list[Any] = [b""]
        for event in self.events:
            if event == "close":
                joined += ["close", b""]
            else:
                joined[-1] += event
        return joined

    @property
    def writes(self) -> int:
        return sum(1 for event in self.events if event != "close")


def _start(length: int | None, status: int = 200) -> dict[str, Any]:
    headers = [(b"content-type", b"application/json")]
    if length is not None:
        headers.insert(0, (b"content-length", str(length).encode()))
    return {"type": "http.response.start", "status": status, "headers": headers}


def _body(body: bytes, more: bool = False) -> dict[str, Any]:
    return {"type": "http.response.body", "body": body, "more_body": more}


async def json_reply(scope: Any, receive: Any, send: Any) -> None:
    await receive()
    await send(_start(len(JSON)))
    await send(_body(JSON))


async def empty(scope: Any, receive: Any, send: Any) -> None:
    await send(_start(0, 204))
    await send(_body(b""))


async def chunked(scope: Any, receive: Any, send: Any) -> None:
    await send(_start(None))
    await send(_body(b"part one", more=True))
    await asyncio.sleep(0)
    await send(_body(b"part two"))


async def streamed_with_length(scope: Any, receive: Any, send: Any) -> None:
    await send(_start(8))
    await asyncio.sleep(0)
    await send(_body(b"four", more=True))
    await send(_body(b"more"))


async def fails_after_start(scope: Any, receive: Any, send: Any) -> None:
    await send(_start(len(JSON)))
    raise RuntimeError("planted")


async def returns_without_body(scope: Any, receive: Any, send: Any) -> None:
    await send(_start(len(JSON)))


async def too_long(scope: Any, receive: Any, send: Any) -> None:
    await send(_start(2))
    await send(_body(JSON))


async def reads_body(scope: Any, receive: Any, send: Any) -> None:
    message = await receive()
    await send(_start(len(message["body"])))
    await send(_body(message["body"]))


GET = b"GET / HTTP/1.1\r\nHost: test\r\n\r\n"
POST = b"POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 4\r\n\r\nping"

EXCHANGES = {
    "json": (json_reply, POST),
    "head": (json_reply, b"HEAD / HTTP/1.1\r\nHost: test\r\n\r\n"),
    "empty": (empty, GET),
    "chunked": (chunked, GET),
    "streamed with a length": (streamed_with_length, GET),
    "fails after start": (fails_after_start, GET),
    "returns without a body": (returns_without_body, GET),
    "body too long": (too_long, GET),
    "connection close": (json_reply, b"GET / HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n"),
    "http/1.0": (json_reply, b"GET / HTTP/1.0\r\n\r\n"),
    "100 continue": (
        reads_body,
        b"POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\nping",
    ),
    "pipelined": (json_reply, POST + GET + POST),
}


async def _exchange(protocol_class: type[HttpToolsProtocol], app: Any, request: bytes) -> Transport:
    config = uvicorn.Config(app, http=protocol_class, lifespan="off", log_config=None)
    config.load()
    state = ServerState()
    protocol = protocol_class(config=config, server_state=state, app_state={})
    transport = Transport()
    protocol.connection_made(transport)  # type: ignore[arg-type]
    protocol.data_received(request)
    for _ in range(20):  # pipelined requests start as the one before completes
        await asyncio.sleep(0)
        if state.tasks:
            await asyncio.wait(list(state.tasks))
    if protocol.timeout_keep_alive_task is not None:
        protocol.timeout_keep_alive_task.cancel()
    return transport


@pytest.mark.parametrize("name", EXCHANGES)
async def test_the_same_bytes_as_uvicorns_protocol(name: str) -> None:
    app, request = EXCHANGES[name]
    ours = await _exchange(OneWriteHttpProtocol, app, request)
    uvicorns = await _exchange(HttpToolsProtocol, app, request)
    assert ours.bytes_and_closes() == uvicorns.bytes_and_closes()
    assert uvicorns.events  # every exchange writes something


async def test_a_response_with_a_body_leaves_in_one_write() -> None:
    ours = await _exchange(OneWriteHttpProtocol, json_reply, POST)
    uvicorns = await _exchange(HttpToolsProtocol, json_reply, POST)
    assert (ours.writes, uvicorns.writes) == (1, 2)
    assert ours.events[0].endswith(b"\r\n\r\n" + JSON)


async def test_a_head_without_its_body_is_not_held() -> None:
    """A streamed response's head goes out before its body, as uvicorn sends
    it, when no body has to follow at once (chunked) or none follows (HEAD)."""
    for app, request in (EXCHANGES["chunked"], EXCHANGES["head"]):
        ours = await _exchange(OneWriteHttpProtocol, app, request)
        assert ours.events[0].startswith(b"HTTP/1.1 200 OK\r\n")
        assert ours.events[0].endswith(b"\r\n\r\n")


async def test_a_finished_request_is_freed_without_the_collector() -> None:
    """The held head must not tie a request's objects into a reference
    cycle: each would wait for the collector instead of going when answered."""
    config = uvicorn.Config(json_reply, http=OneWriteHttpProtocol, lifespan="off", log_config=None)
    config.load()
    state = ServerState()
    protocol = OneWriteHttpProtocol(config=config, server_state=state, app_state={})
    protocol.connection_made(Transport())  # type: ignore[arg-type]
    gc.disable()
    try:
        protocol.data_received(POST)
        await asyncio.wait(list(state.tasks))
        first = weakref.ref(protocol.cycle)
        protocol.data_received(POST)  # the protocol lets go of the first cycle
        await asyncio.wait(list(state.tasks))
        assert first() is None
    finally:
        gc.enable()
        if protocol.timeout_keep_alive_task is not None:
            protocol.timeout_keep_alive_task.cancel()
