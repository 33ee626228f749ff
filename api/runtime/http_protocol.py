"""uvicorn's httptools protocol, a response's head and body sent in one write.

uvicorn writes a response's status line and headers to the transport on
``http.response.start`` and the body on ``http.response.body``; uvloop sends
each write at once, a ``send`` system call apiece, made holding the GIL. For
a small answer the two calls were 40% of the event loop's samples under 16
connections, the head's alone 28% (docs/design.md, The /graphql entry). When
the head declares a ``Content-Length`` above zero and the request is not a
HEAD, a body write must follow (or uvicorn closes the connection), so the
head waits for it and both leave in one call: the same bytes, in the same
order. Any other response (chunked, empty, HEAD, a 100 Continue) is written
as uvicorn writes it. ``tests/api/runtime/test_http_protocol.py`` holds the
bytes to uvicorn's own protocol's.

Its WebSocket protocol (``LeanWebSocketProtocol``) is uvicorn's websockets
sans-I/O one holding less per open socket, which an idle subscription is
(docs/design.md, Alert fan-out): an ``asyncio.Queue`` and an
``asyncio.Event`` each make their deques of waiters when made (3.9 KB
together, for a queue that holds one message at a time, since uvicorn stops
reading until the app takes it), so the inbox and the writable flag here
make a waiter only while someone waits; and the handshake's request and
response (their headers, 4 KB) are dropped on the first message after the
handshake, after which neither uvicorn nor websockets reads them.
``tests/api/runtime/test_ws_protocol.py`` holds it to uvicorn's own. It
also puts a ``DirectFrames`` in each connection's scope (``DIRECT_FRAMES``):
the direct fan-out writes a subscription's ``next`` frames through it,
without an ASGI ``send`` awaited per socket (docs/design.md, Alert fan-out).

This is uvicorn's one door (docs/design.md, "Libraries' private names"): the
protocol classes (``HttpToolsProtocol``, ``WebSocketsSansIOProtocol``, from
modules uvicorn does not document), the HTTP protocol's ``cycle``, ``parser``
and ``handle_websocket_upgrade``, the cycle's ``transport``,
``response_started`` and ``expected_content_length``, the WebSocket
protocol's ``queue``, ``writable``, ``request``, ``response``,
``handshake_complete``, ``handle_connect``, ``scope``, ``conn``,
``transport``, ``close_sent``, ``disconnected`` and ``initial_response``
are uvicorn's internals, used nowhere else (and that
websockets' ``ServerProtocol.parse`` keeps the request, and that its
``state`` property returns ``_state``, read here directly, as of 17.4).
Checked against uvicorn 0.54.0: on an upgrade, read
``uvicorn/protocols/http/httptools_impl.py`` again;
``tests/test_library_doors.py`` fails until this line names the installed
version.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import deque
from typing import TYPE_CHECKING, Any, cast

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.exceptions import InvalidState, ProtocolError
from websockets.protocol import State

from api.runtime.direct_frames import DIRECT_FRAMES, NOT_WRITTEN, WRITTEN, WRITTEN_PAUSED

if TYPE_CHECKING:
    from uvicorn._types import ASGIReceiveEvent
    from uvicorn.protocols.http.httptools_impl import RequestResponseCycle
    from websockets.frames import Frame
    from websockets.http11 import Request

__all__ = ["DirectFrames", "LeanWebSocketProtocol", "OneWriteHttpProtocol"]


class OneWriteHttpProtocol(HttpToolsProtocol):
    def on_headers_complete(self) -> None:
        previous = self.cycle
        super().on_headers_complete()
        cycle = self.cycle
        if cycle is not previous:  # a new request (not an upgrade)
            cycle.transport = cast("asyncio.Transport", _HeadWithBody(self.transport, cycle))

    def handle_websocket_upgrade(self) -> None:
        super().handle_websocket_upgrade()
        # The transport now speaks to the WebSocket protocol, and this one is
        # done; uvicorn drops its parser, which holds it, only on
        # ``connection_lost``, which now goes to the other protocol: left, the
        # two waited in a cycle for a full collection (docs/design.md, Memory growth).
        self.parser = None  # type: ignore[assignment]


class _HeadWithBody:
    """The cycle's transport: holds the head of a response whose body must
    follow and writes it with the next write; a close writes it first. It
    refers to its cycle weakly: a strong reference would make a reference
    cycle of each request's objects, left for the collector instead of
    freed when the request ends (measured: +15 us a small query under load)."""

    __slots__ = ("_cycle", "_head", "_started", "_transport")

    def __init__(self, transport: asyncio.Transport, cycle: RequestResponseCycle) -> None:
        self._transport = transport
        self._cycle = weakref.ref(cycle)
        self._head: bytes | None = None
        self._started = False

    def write(self, data: bytes) -> None:
        head = self._head
        if head is not None:
            self._head = None
            data = head + data
        elif not self._started and (cycle := self._cycle()) is not None and cycle.response_started:
            self._started = True  # this write is the head: uvicorn has read its headers
            # A length above zero: not chunked, and uvicorn counts the body to it.
            if cycle.expected_content_length > 0 and cycle.scope["method"] != "HEAD":
                self._head = data
                return
        self._transport.write(data)

    def close(self) -> None:
        head = self._head
        if head is not None:
            self._head = None
            self._transport.write(head)
        self._transport.close()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    # No ``__getattr__`` passing the rest on: a class with one pays for it on
    # every attribute read, its own included (~2,000 instructions a request).
    # uvicorn's cycle calls ``write``, ``close`` and ``is_closing`` on its
    # transport, nothing else (checked against 0.54.0, as above).


class LeanWebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's websockets sans-I/O protocol, less per idle socket (above)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.queue = cast("asyncio.Queue[ASGIReceiveEvent]", _Inbox())
        self.flow = _Writable()
        """The writable flag, as ours: the fan-out reads it per socket."""
        self.writable = cast("asyncio.Event", self.flow)

    def handle_connect(self, event: Request) -> None:
        super().handle_connect(event)
        scope = self.__dict__.get("scope")
        if scope is not None:  # none for a refused handshake
            scope[DIRECT_FRAMES] = DirectFrames(self)

    def handle_text(self, event: Frame) -> None:
        if self.handshake_complete and "response" in self.__dict__:
            self._let_go_of_handshake()
        super().handle_text(event)

    def _let_go_of_handshake(self) -> None:
        """The request and response are read only to answer the handshake
        (uvicorn's ``handle_connect`` and the accept in ``send``); let go on
        the first message after it, not in ``send``, which would put a frame
        on every message sent. The websockets parser's frame keeps the
        request for the connection's life, never reading it again: its
        headers are emptied (the scope has its own copy)."""
        request = self.__dict__.pop("request", None)
        if request is not None:
            request.headers.clear()
        del self.response


class DirectFrames:
    """Text frames written on one socket as uvicorn's ``send`` writes a
    ``websocket.send``, without awaiting: nothing is written once the close
    is sent or the peer is gone (``NOT_WRITTEN``), and a socket whose
    transport asked to pause still takes the frame (``WRITTEN_PAUSED``: the
    caller counts those, its slow-consumer rule). A server's text
    frame is unmasked: with no extension negotiated (``serve`` turns
    permessage-deflate off) it is a header and the UTF-8 bytes, written
    here without websockets' ``Frame`` (the bytes its ``send_text`` writes,
    held to it by ``tests/api/runtime/test_ws_protocol.py``). It holds the
    protocol weakly: the protocol holds the scope, which holds this."""

    __slots__ = ("_protocol",)

    def __init__(self, protocol: LeanWebSocketProtocol) -> None:
        self._protocol = weakref.ref(protocol)

    def write(self, data: bytes, frame: bytes) -> int:
        protocol = self._protocol()
        if (
            protocol is None
            or protocol.close_sent
            or protocol.disconnected
            or not protocol.handshake_complete
            or protocol.initial_response is not None
        ):
            return NOT_WRITTEN
        transport = protocol.transport
        conn = protocol.conn
        # ``_state``: what websockets' ``state`` property returns, without
        # the property's call (once per socket per alert).
        if conn._state is not _OPEN or transport.is_closing():
            return NOT_WRITTEN
        if conn.extensions or conn.expect_continuation_frame:
            try:
                conn.send_text(data)
            except (InvalidState, ProtocolError):
                return NOT_WRITTEN
            transport.write(b"".join(conn.data_to_send()))
        else:
            transport.write(frame)
        return WRITTEN_PAUSED if protocol.flow._paused else WRITTEN


_OPEN = State.OPEN


class _Inbox:
    """What uvicorn uses of ``asyncio.Queue``: ``put_nowait``, ``get`` and
    ``empty``. Unbounded as uvicorn's is; uvicorn pauses reading the socket
    until the app has taken what it queued, so it holds one message or two."""

    __slots__ = ("_items", "_waiters")

    def __init__(self) -> None:
        self._items: deque[ASGIReceiveEvent] | None = None
        self._waiters: list[asyncio.Future[None]] | None = None

    def put_nowait(self, item: ASGIReceiveEvent) -> None:
        if self._items is None:
            self._items = deque()
        self._items.append(item)
        _wake(self._waiters)

    def empty(self) -> bool:
        return not self._items

    async def get(self) -> ASGIReceiveEvent:
        while not self._items:
            await _wait(self)
        item = self._items.popleft()
        if not self._items:
            self._items = None
        return item


class _Writable:
    """What uvicorn uses of ``asyncio.Event`` for a transport's flow control."""

    __slots__ = ("_paused", "_waiters")

    def __init__(self) -> None:
        self._paused = False
        self._waiters: list[asyncio.Future[None]] | None = None

    def set(self) -> None:
        self._paused = False
        _wake(self._waiters)

    def clear(self) -> None:
        self._paused = True

    def is_set(self) -> bool:
        return not self._paused

    async def wait(self) -> bool:
        while self._paused:
            await _wait(self)
        return True


async def _wait(owner: _Inbox | _Writable) -> None:
    """Until ``owner`` wakes its waiters; the list exists only while one waits."""
    waiter = asyncio.get_running_loop().create_future()
    waiters = owner._waiters
    if waiters is None:
        waiters = owner._waiters = []
    waiters.append(waiter)
    try:
        await waiter
    finally:
        waiters.remove(waiter)
        if not waiters and owner._waiters is waiters:
            owner._waiters = None


def _wake(waiters: list[asyncio.Future[None]] | None) -> None:
    if waiters:
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)
