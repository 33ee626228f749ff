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

``LeanHttpProtocol`` (the ``protocol`` lane of ``PROOFGATE_EXECUTION``)
answers the common request (HTTP/1.1 keep-alive, a body of at most 64 KiB, no
``Expect``, no upgrade, not a HEAD, none in flight before it) on a leaner
cycle: a subclass of uvicorn's whose constant state is class attributes, whose
app starts once the body is read (so the first ``receive`` hands it over
without an ``asyncio.Event``, made only if the app asks again), which builds
the head as uvicorn builds it, remembering the header names and values it has
checked (``CHECKED_HEADERS``) and the server's default headers' spelling, and
writes it with its body. Its ``answer`` (``api/runtime/direct_answer.py``)
takes a response's status, headers and whole body at once, as its ``send``
would take the two messages, without them: the /graphql entry answers
through it. Anything else, or a
request that turns out not to be common (a large body, a disconnect or
shutdown while its body arrives), goes to uvicorn's cycle as if it had from
its headers, counted in ``proofgate_fast_path_fallbacks{lane="protocol"}``
(docs/design.md, The server under the app). The same differential test holds
it to uvicorn's bytes, scopes and messages.

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
without an ASGI ``send`` awaited per socket (docs/design.md, Alert fan-out),
and the keep-alives theirs; through it the handler may ask to be offered
each text message first while it waits for one, so pongs and pings are
answered below the app (docs/design.md, Keep-alives).

This is uvicorn's one door (docs/design.md, "Libraries' private names"): the
protocol classes (``HttpToolsProtocol``, ``WebSocketsSansIOProtocol``, from
modules uvicorn does not document), the HTTP protocol's ``cycle``, ``parser``
and ``handle_websocket_upgrade``, the cycle's ``transport``,
``response_started`` and ``expected_content_length``; for the lean cycle
the protocol's ``_start_asgi_task``, ``url``, ``scope``, ``headers``,
``pipeline`` and ``expect_100_continue``, the cycle's class and every attribute
its methods read, ``ProxyHeadersMiddleware`` and its ``app`` (called past it
when no forwarded header came: it reads ``x-forwarded-for`` and
``x-forwarded-proto`` alone), ``STATUS_LINE``, ``HEADER_RE`` and ``HEADER_VALUE_RE``
(``send``'s ``http.response.start`` is copied from 0.54.0); the WebSocket
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
import logging
import urllib.parse
import weakref
from collections import deque
from collections.abc import Awaitable, Iterable
from typing import TYPE_CHECKING, Any, cast

import httptools
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware
from uvicorn.protocols.http.flow_control import HIGH_WATER_LIMIT
from uvicorn.protocols.http.httptools_impl import (
    HEADER_RE,
    HEADER_VALUE_RE,
    STATUS_LINE,
    HttpToolsProtocol,
    RequestResponseCycle,
)
from uvicorn.protocols.utils import get_client_addr, get_path_with_query_string
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.exceptions import InvalidState, ProtocolError
from websockets.protocol import State

from api.observability.fallbacks import fell_back
from api.runtime.direct_answer import ANSWERS_AT_ONCE
from api.runtime.direct_frames import (
    DIRECT_FRAMES,
    HELD,
    NOT_WRITTEN,
    WRITTEN,
    WRITTEN_PAUSED,
    IdleAnswer,
)
from api.settings.limits import Lane

if TYPE_CHECKING:
    from uvicorn._types import ASGIReceiveEvent, ASGISendEvent
    from websockets.frames import Frame
    from websockets.http11 import Request

__all__ = ["DirectFrames", "LeanHttpProtocol", "LeanWebSocketProtocol", "OneWriteHttpProtocol"]


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


LEAN_MAX_BODY = HIGH_WATER_LIMIT
"""A body the lean cycle holds at most before it hands the request to
uvicorn's cycle: the size at which uvicorn stops reading to let the app catch up."""
CHECKED_HEADERS = 512
"""Header names and values remembered as checked, at most (each kind); a
full set is emptied, not closed to new values: request ids and dates filled
it for good, and then a value on every response was searched every time."""


class LeanHttpProtocol(OneWriteHttpProtocol):
    """The common request (HTTP/1.1 keep-alive, a body of at most
    ``LEAN_MAX_BODY`` bytes, no ``Expect``, no upgrade, not a HEAD, none in
    flight before it) answered by a leaner cycle
    (docs/design.md, The server under the app): the app starts once the body
    is read, so the first ``receive`` needs no event; a response's head, built
    as uvicorn builds it, leaves with its body in one write. Anything else
    takes uvicorn's cycle (with ``OneWriteHttpProtocol``'s single write),
    counted by cause."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._reading: bytearray | None = None
        """The body of a request the lean cycle will answer, while it arrives."""
        self._idle_since: float | None = None
        """When the last response ended, none being read or answered since."""
        self._lazy_timer = False
        """The keep-alive timer is ``_keep_alive_due``, not uvicorn's."""

    def on_headers_complete(self) -> None:
        parser = self.parser
        method = parser.get_method()
        cause = self._declined(method)
        if cause is not None:
            fell_back(Lane.PROTOCOL, cause)
            super().on_headers_complete()
            return
        scope = self.scope
        scope["method"] = method.decode("ascii")
        parsed = httptools.parse_url(self.url)
        raw_path = parsed.path
        path = raw_path.decode("ascii")
        if "%" in path:
            path = urllib.parse.unquote(path)
        scope["path"] = self.root_path + path
        scope["raw_path"] = self.root_path.encode("ascii") + raw_path
        scope["query_string"] = parsed.query or b""
        self._reading = bytearray()

    def _declined(self, method: bytes) -> str | None:
        """Why uvicorn's cycle answers this request, or None."""
        parser = self.parser
        if method == b"HEAD":
            return "HEAD"
        if parser.should_upgrade():
            return "upgrade"
        if parser.get_http_version() != "1.1":
            return "not HTTP/1.1"
        if not parser.should_keep_alive():
            return "connection close"
        if self.expect_100_continue:
            return "expect 100-continue"
        cycle = self.cycle
        if (cycle is not None and not cycle.response_complete) or self.pipeline:
            return "pipelined"
        limit = self.limit_concurrency
        if limit is not None and (len(self.connections) >= limit or len(self.tasks) >= limit):
            return "concurrency limit"
        return None

    def on_body(self, body: bytes) -> None:
        reading = self._reading
        if reading is None:
            super().on_body(body)
            return
        reading += body
        if len(reading) > LEAN_MAX_BODY:
            self._hand_over("large body")

    def on_message_complete(self) -> None:
        reading = self._reading
        if reading is None:
            super().on_message_complete()
            return
        self._reading = None
        cycle = _LeanCycle(self, self.scope, bytes(reading))
        self.cycle = cycle  # not through ``cast``: a call a request
        app = self.app
        # uvicorn's proxy headers middleware changes nothing for a request
        # without forwarded headers: called past it, a coroutine frame and
        # its walk of the headers fewer (header names are lower case here).
        if type(app) is ProxyHeadersMiddleware and _FORWARDED.isdisjoint(dict(self.headers)):
            app = app.app
        self._start_asgi_task(cycle, app)

    def _lean_response_complete(self) -> None:
        """uvicorn's ``on_response_complete`` with one keep-alive timer for
        the connection instead of one a response: armed when none runs, it
        looks at when the connection went idle when it fires and waits the
        rest (``_keep_alive_due``); a read no longer cancels it, only marks
        the connection busy. A pipelined request waiting, or reading paused,
        takes uvicorn's way."""
        if self.pipeline or self.flow.read_paused or self.transport.is_closing():
            self.on_response_complete()
            return
        self.server_state.total_requests += 1
        self._idle_since = self.loop.time()
        if not self._lazy_timer:
            super()._unset_keepalive_if_required()
            self.timeout_keep_alive_task = self.loop.call_later(
                self.timeout_keep_alive, self._keep_alive_due
            )
            self._lazy_timer = True

    def _keep_alive_due(self) -> None:
        self.timeout_keep_alive_task = None
        self._lazy_timer = False
        idle_since = self._idle_since
        if idle_since is None:  # busy: the response's end arms it again
            return
        remaining = idle_since + self.timeout_keep_alive - self.loop.time()
        if remaining > 0:
            self.timeout_keep_alive_task = self.loop.call_later(remaining, self._keep_alive_due)
            self._lazy_timer = True
        else:
            self.timeout_keep_alive_handler()

    def _unset_keepalive_if_required(self) -> None:
        """On a read: the connection is busy; the lazy timer stays."""
        self._idle_since = None
        if not self._lazy_timer:
            super()._unset_keepalive_if_required()

    def on_response_complete(self) -> None:
        """uvicorn's cycle ended: uvicorn arms its own timer, so not the lazy one."""
        self._drop_lazy_timer()
        super().on_response_complete()

    def _drop_lazy_timer(self) -> None:
        if self._lazy_timer:
            self._lazy_timer = False
            super()._unset_keepalive_if_required()

    def _hand_over(self, cause: str) -> None:
        """The request being read goes to uvicorn's cycle, as if it had
        taken it from its headers: its app starts, the body so far given."""
        reading = self._reading
        if reading is None:
            return
        self._reading = None
        fell_back(Lane.PROTOCOL, cause)
        super().on_headers_complete()
        if reading:
            super().on_body(bytes(reading))

    def connection_lost(self, exc: Exception | None) -> None:
        self._drop_lazy_timer()
        self._hand_over("disconnected while reading the body")
        super().connection_lost(exc)

    def shutdown(self) -> None:
        self._hand_over("shut down while reading the body")
        super().shutdown()


class _Held:
    """A lean cycle's transport while the head of a response whose body must
    follow waits for it; uvicorn's cycle only closes it then (an app that
    failed after the start), which writes the head first, as uvicorn had."""

    __slots__ = ("head", "transport")

    def __init__(self, transport: asyncio.Transport, head: bytes) -> None:
        self.transport = transport
        self.head = head

    def close(self) -> None:
        self.transport.write(self.head)
        self.transport.close()

    def is_closing(self) -> bool:
        return self.transport.is_closing()


class _Unwaited:
    """The message event of a cycle no one waits on yet: the flags it would
    signal are set before it is, and a second ``receive`` makes a real one."""

    __slots__ = ()

    def set(self) -> None:
        pass


_UNWAITED = cast("asyncio.Event", _Unwaited())
_FORWARDED = frozenset((b"x-forwarded-for", b"x-forwarded-proto"))
"""The headers uvicorn's proxy headers middleware reads."""
_FRAMING = frozenset((b"content-length", b"transfer-encoding", b"connection"))
"""The response headers uvicorn's head reads, not only writes."""
_checked_names: dict[bytes, bytes] = {}
"""Header names checked, each with its lower-case spelling."""
_checked_values: set[bytes] = set()
_spelled_defaults: list[Any] = [None, b""]
"""The server's default headers last seen (the list itself) and their
spelling in a head, checked."""


class _LeanCycle(RequestResponseCycle):
    """uvicorn's cycle for a request whose body is read: its constant state
    as class attributes, its methods for whatever is not the common exchange
    (a second ``receive``, a streamed or chunked response, a failure)."""

    logger = logging.getLogger("uvicorn.error")
    access_logger = logging.getLogger("uvicorn.access")
    disconnected = False
    keep_alive = True
    waiting_for_100_continue = False
    more_body = False
    response_started = False
    response_complete = False
    chunked_encoding: bool | None = None
    expected_content_length = 0
    message_event = _UNWAITED

    def __init__(self, protocol: LeanHttpProtocol, scope: Any, body: bytes) -> None:
        self.scope = scope
        self.transport = protocol.transport
        self.flow = protocol.flow
        self.default_headers = protocol.server_state.default_headers
        self.on_response = protocol._lean_response_complete
        self.access_log = protocol.access_log
        self._first: bytes | None = body
        """The whole body, for the first ``receive``."""

    async def receive(self) -> ASGIReceiveEvent:
        first = self._first
        if first is None or self.disconnected or self.response_complete:
            self._first = None
            if self.message_event is _UNWAITED:
                self.message_event = asyncio.Event()
            self.body = bytearray()
            return await super().receive()
        self._first = None
        return {"type": "http.request", "body": first, "more_body": False}

    async def send(self, message: ASGISendEvent) -> None:
        held = self.transport
        if isinstance(held, _Held):
            self.transport = transport = held.transport
            if (
                message["type"] == "http.response.body"
                and not message.get("more_body", False)
                and not self.disconnected
                and not self.flow.write_paused
            ):
                body = message.get("body", b"")
                if len(body) == self.expected_content_length:
                    self._complete(transport, held.head + body)
                    return
            if not self.disconnected:
                transport.write(held.head)
        elif (
            message["type"] == "http.response.start"
            and not self.response_started
            and not self.disconnected
            and not self.flow.write_paused
        ):
            self._start(message["status"], message.get("headers", ()))
            return
        await super().send(message)

    def answer(
        self, status: int, headers: list[tuple[bytes, bytes]], body: bytes
    ) -> Awaitable[None] | None:
        """``send`` of ``http.response.start`` then of one ``http.response.body``
        (``api/runtime/direct_answer.py``): when the head declares the body's
        length, both leave at once, as ``send`` writes them, without the two
        messages (None); anything else is sent through ``send``, returned to
        be awaited, counted by cause (docs/design.md, The server under the app)."""
        if self.response_started or self.disconnected or self.flow.write_paused:
            fell_back(Lane.PROTOCOL, "answer sent as messages")
            return self._sent(status, headers, body)
        head = self._head(status, headers)
        length = self.expected_content_length
        if length > 0 and not self.chunked_encoding and len(body) == length:
            self._complete(self.transport, head + body)
            return None
        fell_back(Lane.PROTOCOL, "answer's body sent as a message")
        self._held_or_written(head)
        return self.send({"type": "http.response.body", "body": body})

    async def _sent(self, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        await self.send({"type": "http.response.start", "status": status, "headers": headers})
        await self.send({"type": "http.response.body", "body": body})

    def _complete(self, transport: asyncio.Transport, data: bytes) -> None:
        """The response's last write: its head with the whole body."""
        transport.write(data)
        self.expected_content_length = 0
        self.response_complete = True
        if self.message_event is not _UNWAITED:
            self.message_event.set()
        if not self.keep_alive:
            transport.close()
        self.on_response()

    def _start(self, status: int, headers: Iterable[tuple[bytes, bytes]]) -> None:
        """uvicorn's ``http.response.start`` (of 0.54.0), the head held when
        a body of its declared length must follow."""
        self._held_or_written(self._head(status, headers))

    def _held_or_written(self, head: bytes) -> None:
        if self.expected_content_length > 0 and not self.chunked_encoding:
            self.transport = _Held(self.transport, head)  # type: ignore[assignment]
        else:
            self.transport.write(head)

    def _head(self, status: int, headers: Iterable[tuple[bytes, bytes]]) -> bytes:
        """The response's head, as uvicorn's ``send`` builds it, its framing
        noted on the cycle. A header name or value checked once is
        remembered (``CHECKED_HEADERS`` of each), a value of letters and
        digits is not searched (the search looks for control characters),
        and the server's default headers are checked and spelled once per
        list (uvicorn makes one a second, with the date)."""
        self.response_started = True
        if self.access_log:
            scope = self.scope
            self.access_logger.info(
                '%s - "%s %s HTTP/%s" %d',
                get_client_addr(scope),
                scope["method"],
                get_path_with_query_string(scope),
                scope["http_version"],
                status,
            )
        defaults = self.default_headers
        if defaults is _spelled_defaults[0]:
            content = [STATUS_LINE[status], _spelled_defaults[1]]
        else:
            content = [STATUS_LINE[status]]
            if _unframed(defaults):
                spelled = self._spelled(defaults, [])
                _spelled_defaults[:] = [defaults, spelled]
                content.append(spelled)
            else:
                headers = (*defaults, *headers)
        return self._spelled(headers, content, status)

    def _spelled(
        self,
        headers: Iterable[tuple[bytes, bytes]],
        content: list[bytes],
        status: int | None = None,
    ) -> bytes:
        """``headers`` checked and written after ``content``; with a
        ``status``, the head's end (uvicorn's framing headers, the blank line)."""
        has_connection_close = False
        for name, value in headers:
            lowered = _checked_names.get(name)
            if lowered is None:
                if HEADER_RE.search(name):
                    raise RuntimeError("Invalid HTTP header name.")
                lowered = name.lower()
                if len(_checked_names) >= CHECKED_HEADERS:
                    _checked_names.clear()
                _checked_names[name] = lowered
            if value not in _checked_values and not value.isalnum():
                if HEADER_VALUE_RE.search(value):
                    raise RuntimeError("Invalid HTTP header value.")
                if len(_checked_values) >= CHECKED_HEADERS:  # emptied: see CHECKED_HEADERS
                    _checked_values.clear()
                _checked_values.add(value)
            if lowered not in _FRAMING:
                pass
            elif lowered == b"content-length" and self.chunked_encoding is None:
                self.expected_content_length = int(value.decode())
                self.chunked_encoding = False
            elif lowered == b"transfer-encoding" and value.lower() == b"chunked":
                self.expected_content_length = 0
                self.chunked_encoding = True
            elif lowered == b"connection" and b"close" in [
                token.lower().strip() for token in value.split(b",")
            ]:
                self.keep_alive = False
                has_connection_close = True
            content += (lowered, b": ", value, b"\r\n")
        if status is None:
            return b"".join(content)
        if not self.keep_alive and not has_connection_close:
            content.append(b"connection: close\r\n")
        if self.chunked_encoding is None and status not in (204, 304):  # never a HEAD here
            self.chunked_encoding = True
            content.append(b"transfer-encoding: chunked\r\n")
        content.append(b"\r\n")
        return b"".join(content)


def _unframed(headers: list[tuple[bytes, bytes]]) -> bool:
    """None of ``headers`` is one the head reads (a server's configured
    ``--header`` could be): such a list's spelling stands for it."""
    return all(name.lower() not in _FRAMING for name, _ in headers)


ANSWERS_AT_ONCE.add(_LeanCycle)


class LeanWebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's websockets sans-I/O protocol, less per idle socket (above)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.queue = cast("asyncio.Queue[ASGIReceiveEvent]", _Inbox())
        self.flow = _Writable()
        """The writable flag, as ours: the fan-out reads it per socket."""
        self.writable = cast("asyncio.Event", self.flow)
        self.idle_answer: IdleAnswer | None = None
        """Offered each text message in one frame while the app waits for one
        (``DirectFrames.answer_idle``): the keep-alive's pongs and a client's
        pings, answered without the app (docs/design.md, Keep-alives). Set
        here, with the others, so every socket's attributes share one key
        table."""

    def handle_connect(self, event: Request) -> None:
        super().handle_connect(event)
        scope = self.__dict__.get("scope")
        if scope is not None:  # none for a refused handshake
            scope[DIRECT_FRAMES] = DirectFrames(self)

    def handle_text(self, event: Frame) -> None:
        if self.handshake_complete and "response" in self.__dict__:
            self._let_go_of_handshake()
        answer = self.idle_answer
        if (
            answer is not None
            and event.fin
            and not self.close_sent
            and not self.flow._paused
            and cast("_Inbox", self.queue).awaited()
            and answer(bytes(event.data), cast("dict[str, Any]", self.scope)[DIRECT_FRAMES])
        ):
            return
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

    __slots__ = ("_conn", "_protocol", "_transport")

    def __init__(self, protocol: LeanWebSocketProtocol) -> None:
        self._protocol = weakref.ref(protocol)
        # Neither refers back to the protocol once it is lost (uvloop's and
        # asyncio's transports let go of it then): ``ready`` reads these two alone.
        self._conn = protocol.conn
        self._transport = protocol.transport

    def ready(self) -> asyncio.WriteTransport | None:
        # uvicorn sends a close (``close_sent``) through websockets, whose
        # state is then no longer OPEN, and loses the connection (``disconnected``)
        # after its transport closed; a handshake is complete, and not
        # refused (``initial_response``), once the state is OPEN.
        conn = self._conn
        transport = self._transport
        if (
            conn._state is not _OPEN
            or transport.is_closing()
            or conn.extensions
            or conn.expect_continuation_frame
        ):
            return None
        return cast("asyncio.WriteTransport", transport)

    def paused(self) -> bool:
        protocol = self._protocol()
        return protocol is not None and protocol.flow._paused

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

    def write_ready(self, data: bytes, frame: bytes) -> int:
        protocol = self._protocol()
        if protocol is not None and protocol.flow._paused:
            return HELD
        return self.write(data, frame)

    def answer_idle(self, answer: IdleAnswer | None) -> None:
        protocol = self._protocol()
        if protocol is not None:
            protocol.idle_answer = answer


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

    def awaited(self) -> bool:
        """The app waits for a message and none is queued: a message now is
        the next it takes, after everything before it was handled."""
        return self._items is None and bool(self._waiters)

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
