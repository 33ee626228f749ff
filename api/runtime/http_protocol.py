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

This is uvicorn's one door (docs/design.md, "Libraries' private names"): the
protocol class (``HttpToolsProtocol``, from a module uvicorn does not document),
its ``cycle``, ``parser`` and ``handle_websocket_upgrade``, and the cycle's
``transport``, ``response_started`` and ``expected_content_length`` are
uvicorn's internals, used nowhere else.
Checked against uvicorn 0.54.0: on an upgrade, read
``uvicorn/protocols/http/httptools_impl.py`` again;
``tests/test_library_doors.py`` fails until this line names the installed
version.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, cast

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

if TYPE_CHECKING:
    import asyncio

    from uvicorn.protocols.http.httptools_impl import RequestResponseCycle

__all__ = ["OneWriteHttpProtocol"]


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

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)
