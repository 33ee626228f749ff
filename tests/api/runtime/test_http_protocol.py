"""``OneWriteHttpProtocol`` and ``LeanHttpProtocol`` against uvicorn's own
httptools protocol: for each exchange (keep-alive, pipelining, HEAD, 100
Continue, bad requests, bodies split and large, proxy headers, a shutdown
mid-request), the same bytes reach the transport in the same order, closed
at the same point, and the app sees the same scope and messages; a response
with a body leaves in one write instead of two. The lean cycle's ``answer``
is held to the two messages it stands for, the gateway's answers included."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Callable
from typing import Any

import pytest
import uvicorn
from conftest import _serve, _settings, with_lanes
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from api.observability.fallbacks import counts
from api.runtime.direct_answer import ANSWERS_AT_ONCE
from api.runtime.http_protocol import (
    LEAN_MAX_BODY,
    LeanHttpProtocol,
    OneWriteHttpProtocol,
    _LeanCycle,
)
from api.settings.limits import Lane

OURS = (OneWriteHttpProtocol, LeanHttpProtocol)

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


async def reads_all(scope: Any, receive: Any, send: Any) -> None:
    """Reads the whole body, answers its length and how many messages it took."""
    body, messages = b"", 0
    while True:
        message = await receive()
        body, messages = body + message["body"], messages + 1
        if not message["more_body"]:
            break
    answer = b"%d bytes" % len(body)
    await send(_start(len(answer)))
    await send(_body(answer))


async def echoes_scope(scope: Any, receive: Any, send: Any) -> None:
    answer = repr([scope[key] for key in SCOPE_KEYS]).encode()
    await send(_start(len(answer)))
    await send(_body(answer))


async def bad_header(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": [(b"x-bad", b"a\nb")]})


async def listens_for_disconnect(scope: Any, receive: Any, send: Any) -> None:
    """As Starlette's streaming response listens: a second ``receive``,
    waiting, answered once the response is complete."""
    await receive()
    listener = asyncio.ensure_future(receive())
    await asyncio.sleep(0)  # the listener waits
    await send(_start(len(JSON)))
    await send(_body(JSON))
    await listener


SCOPE_KEYS = (
    "type", "asgi", "http_version", "server", "client", "scheme", "root_path",
    "method", "path", "raw_path", "query_string", "headers",
)  # fmt: skip
GET = b"GET / HTTP/1.1\r\nHost: test\r\n\r\n"
POST = b"POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 4\r\n\r\nping"
LARGE = b"x" * (LEAN_MAX_BODY + 10)
LARGE_POST = b"POST / HTTP/1.1\r\nHost: test\r\nContent-Length: %d\r\n\r\n" % len(LARGE) + LARGE

Step = Callable[[HttpToolsProtocol], None]
"""Something done to the protocol between two reads."""
RELEASE = asyncio.Event()


async def held(scope: Any, receive: Any, send: Any) -> None:
    """Answers once ``RELEASE`` is set (by a step), as a slow request would."""
    await receive()
    await RELEASE.wait()
    await send(_start(len(JSON)))
    await send(_body(JSON))


def _shutdown(protocol: HttpToolsProtocol) -> None:
    protocol.shutdown()
    RELEASE.set()


def _disconnect(protocol: HttpToolsProtocol) -> None:
    protocol.connection_lost(None)


EXCHANGES: dict[str, tuple[Any, bytes | tuple[bytes | Step, ...]]] = {
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
    "keep-alive": (json_reply, (POST, GET, POST)),
    "headers split": (reads_all, (POST[:20], POST[20:])),
    "body split": (reads_all, (POST[:-2], POST[-2:])),
    "chunked request": (
        reads_all,
        b"POST / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"4\r\nping\r\n4\r\npong\r\n0\r\n\r\n",
    ),
    "large body": (reads_all, LARGE_POST),
    "large body in pieces": (
        reads_all,
        tuple(LARGE_POST[i : i + 16384] for i in range(0, len(LARGE_POST), 16384)),
    ),
    "bad request": (json_reply, b"NOT HTTP\r\n\r\n"),
    "bad request on a kept connection": (json_reply, (POST, b"NOT HTTP\r\n\r\n")),
    "a header the app got wrong": (bad_header, GET),
    "proxy headers": (
        echoes_scope,
        b"POST /a%20b/c?x=1&y=%20 HTTP/1.1\r\nHost: test\r\nContent-Length: 0\r\n"
        b"X-Forwarded-For: 203.0.113.7, 127.0.0.1\r\nX-Forwarded-Proto: https\r\n\r\n",
    ),
    "proxy header, for alone": (
        echoes_scope,
        b"GET / HTTP/1.1\r\nHost: test\r\nX-Forwarded-For: 203.0.113.7\r\n\r\n",
    ),
    "proxy header, proto alone": (
        echoes_scope,
        b"GET / HTTP/1.1\r\nHost: test\r\nX-Forwarded-Proto: https\r\n\r\n",
    ),
    "proxy header in upper case": (
        echoes_scope,
        b"GET / HTTP/1.1\r\nHost: test\r\nX-FORWARDED-FOR: 203.0.113.7\r\n\r\n",
    ),
    "a second receive": (listens_for_disconnect, POST),
    "shutdown while answering": (held, (POST, _shutdown)),
    "shutdown while reading the body": (reads_all, (POST[:-2], _shutdown, POST[-2:])),
    "disconnect while reading the body": (reads_all, (POST[:-2], _disconnect)),
    "upgrade to h2c": (
        json_reply,
        b"GET / HTTP/1.1\r\nHost: test\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n",
    ),
}


READ_WHOLE = {"disconnect while reading the body"}
"""Exchanges where uvicorn's app, started at the headers, reads part of the
body before the disconnect; the lean cycle's starts at the disconnect and
reads only that (the same scope, the same last message)."""


def _recording(app: Any, seen: list[Any]) -> Any:
    """``app``, its scope and every message it receives written to ``seen``,
    a body's parts joined (where a body splits into messages is the
    server's choice, which the app must not rely on: ASGI's)."""

    async def recorded(scope: Any, receive: Any, send: Any) -> None:
        seen.append({key: scope.get(key) for key in SCOPE_KEYS})

        async def receiving() -> Any:
            message = await receive()
            last = seen[-1]
            if message["type"] == last.get("type") == "http.request" and last["more_body"]:
                seen[-1] = {**message, "body": last["body"] + message["body"]}
            else:
                seen.append(message)
            return message

        await app(scope, receiving, send)

    return recorded


async def _settle(state: ServerState, last: bool) -> None:
    """The app runs on what it was sent; after the last part, until it is done."""
    for _ in range(20):  # pipelined requests start as the one before completes
        await asyncio.sleep(0)
        if last and state.tasks:
            await asyncio.wait(list(state.tasks))


def _protocol(
    protocol_class: type[HttpToolsProtocol], app: Any, **options: Any
) -> tuple[HttpToolsProtocol, ServerState, Transport]:
    config = uvicorn.Config(app, http=protocol_class, lifespan="off", log_config=None, **options)
    config.load()
    state = ServerState()
    protocol = protocol_class(config=config, server_state=state, app_state={})
    transport = Transport()
    protocol.connection_made(transport)  # type: ignore[arg-type]
    return protocol, state, transport


async def _exchange(
    protocol_class: type[HttpToolsProtocol],
    app: Any,
    request: bytes | tuple[bytes | Step, ...],
    seen: list[Any] | None = None,
    **options: Any,
) -> Transport:
    """``request`` (each part a read of its own) sent to ``app`` served by
    ``protocol_class``: what reached the transport."""
    app = _recording(app, [] if seen is None else seen)
    protocol, state, transport = _protocol(protocol_class, app, **options)
    parts = (request,) if isinstance(request, bytes) else request
    for number, part in enumerate(parts, 1):
        if callable(part):
            part(protocol)
        elif not transport.closing:
            protocol.data_received(part)
        await _settle(state, number == len(parts))
    if protocol.timeout_keep_alive_task is not None:
        protocol.timeout_keep_alive_task.cancel()
    return transport


@pytest.mark.parametrize("ours", OURS)
@pytest.mark.parametrize("name", EXCHANGES)
async def test_the_same_bytes_as_uvicorns_protocol(
    name: str, ours: type[HttpToolsProtocol]
) -> None:
    app, request = EXCHANGES[name]
    seen: list[Any] = []
    RELEASE.clear()
    served = await _exchange(ours, app, request, seen)
    uvicorns_seen: list[Any] = []
    RELEASE.clear()
    uvicorns = await _exchange(HttpToolsProtocol, app, request, uvicorns_seen)
    assert served.bytes_and_closes() == uvicorns.bytes_and_closes()
    if name in READ_WHOLE:
        assert (seen[0], seen[-1]) == (uvicorns_seen[0], uvicorns_seen[-1])
    else:
        assert seen == uvicorns_seen  # the app saw the same scopes and messages
    assert uvicorns.events  # every exchange writes something


@pytest.mark.parametrize("ours", OURS)
async def test_past_the_concurrency_limit_the_same_503(ours: type[HttpToolsProtocol]) -> None:
    served = await _exchange(ours, json_reply, POST, limit_concurrency=1)
    uvicorns = await _exchange(HttpToolsProtocol, json_reply, POST, limit_concurrency=1)
    assert served.bytes_and_closes() == uvicorns.bytes_and_closes()
    assert served.events[0].startswith(b"HTTP/1.1 503 ")


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


async def test_the_lean_cycle_answers_the_common_request_and_counts_the_rest() -> None:
    """A kept-alive POST and GET take no fallback; a HEAD, an HTTP/1.0
    request, an ``Expect`` and a large body each count under their cause."""
    before = dict(counts())
    await _exchange(LeanHttpProtocol, json_reply, (POST, GET))
    assert dict(counts()) == before
    for name, cause in (
        ("head", "HEAD"),
        ("http/1.0", "not HTTP/1.1"),
        ("100 continue", "expect 100-continue"),
        ("large body", "large body"),
        ("connection close", "connection close"),
    ):
        app, request = EXCHANGES[name]
        await _exchange(LeanHttpProtocol, app, request)
        key = (Lane.PROTOCOL.value, cause)
        assert counts().get(key, 0) == before.get(key, 0) + 1, name


@pytest.mark.parametrize(
    ("request_bytes", "forwarded"),
    ((POST, False), (EXCHANGES["proxy header, for alone"][1], True)),
    ids=("no forwarded header", "forwarded for"),
)
async def test_the_lean_cycle_calls_past_the_proxy_middleware_only_without_its_headers(
    request_bytes: bytes, forwarded: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a forwarded header the app is called past uvicorn's proxy
    headers middleware (which would change nothing); with one, through it."""
    called: list[Any] = []
    original = ProxyHeadersMiddleware.__call__

    async def spied(self: Any, scope: Any, receive: Any, send: Any) -> None:
        called.append(scope)
        await original(self, scope, receive, send)

    monkeypatch.setattr(ProxyHeadersMiddleware, "__call__", spied)
    seen: list[Any] = []
    protocol, state, _ = _protocol(LeanHttpProtocol, _recording(echoes_scope, seen))
    assert type(protocol.app) is ProxyHeadersMiddleware
    protocol.data_received(request_bytes)
    await _settle(state, True)
    if protocol.timeout_keep_alive_task is not None:
        protocol.timeout_keep_alive_task.cancel()
    assert len(called) == forwarded
    assert seen[0]["client"] == (("203.0.113.7", 0) if forwarded else ("127.0.0.1", 5000))


async def unique_header(scope: Any, receive: Any, send: Any) -> None:
    """A value no response repeats, as a request id, beside a constant one."""
    await receive()
    headers = [(b"content-length", b"2"), (b"x-request-id", next(_IDS))]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send(_body(b"ok"))


async def later_header(scope: Any, receive: Any, send: Any) -> None:
    await receive()
    headers = [(b"content-length", b"2"), (b"x-later", b"first seen late")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send(_body(b"ok"))


_IDS = (b"%016x" % number for number in range(10**9))


async def test_checked_header_values_stay_bounded_and_keep_the_common_ones() -> None:
    """More distinct values than ``CHECKED_HEADERS`` (request ids) neither
    grow the remembered values past it nor stop a value every response
    carries from being remembered; a bad value is still refused."""
    from api.runtime import http_protocol

    requests = tuple(POST for _ in range(http_protocol.CHECKED_HEADERS * 2 + 10))
    transport = await _exchange(LeanHttpProtocol, unique_header, requests)
    assert transport.bytes_and_closes()[0].count(b"HTTP/1.1 200 OK") == len(requests)
    assert len(http_protocol._checked_values) <= http_protocol.CHECKED_HEADERS
    # A value first seen once the set has filled is remembered too.
    await _exchange(LeanHttpProtocol, later_header, POST)
    assert b"first seen late" in http_protocol._checked_values
    app, request = EXCHANGES["a header the app got wrong"]
    ours = await _exchange(LeanHttpProtocol, app, request)
    assert (
        ours.bytes_and_closes()
        == (await _exchange(HttpToolsProtocol, app, request)).bytes_and_closes()
    )
    assert ours.events == ["close"]  # refused before a byte, as uvicorn refuses it


KEEP_ALIVE_SECONDS = 5.0


class _Timer:
    def __init__(self, when: float, callback: Callable[..., None], args: tuple[Any, ...]) -> None:
        self.when, self.callback, self.args = when, callback, args
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class Clock:
    """The protocol's loop with its time in the test's hands: tasks run on
    the running loop, timers fire when ``advance`` passes them."""

    def __init__(self) -> None:
        self.now = 0.0
        self.timers: list[_Timer] = []
        self.loop = asyncio.get_running_loop()

    def time(self) -> float:
        return self.now

    def call_later(self, delay: float, callback: Callable[..., None], *args: Any) -> _Timer:
        timer = _Timer(self.now + delay, callback, args)
        self.timers.append(timer)
        return timer

    def create_task(self, coro: Any, **options: Any) -> asyncio.Task[Any]:
        return self.loop.create_task(coro, **options)

    def advance(self, seconds: float) -> None:
        self.now += seconds
        while due := [t for t in self.timers if not t.cancelled and t.when <= self.now]:
            timer = min(due, key=lambda t: t.when)
            self.timers.remove(timer)
            timer.callback(*timer.args)


@pytest.mark.parametrize("served_by", (HttpToolsProtocol, *OURS))
async def test_an_idle_connection_closes_a_keep_alive_timeout_after_its_last_answer(
    served_by: type[HttpToolsProtocol],
) -> None:
    """A request half-way through the timeout puts the close off: it comes a
    whole timeout after the second answer, not the first (the lean
    protocol's one timer a connection looks again when it fires)."""
    clock = Clock()
    config = uvicorn.Config(
        json_reply,
        http=served_by,
        lifespan="off",
        log_config=None,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,  # type: ignore[arg-type]
    )
    config.load()
    state = ServerState()
    protocol = served_by(config=config, server_state=state, app_state={}, _loop=clock)  # type: ignore[arg-type]
    transport = Transport()
    protocol.connection_made(transport)  # type: ignore[arg-type]
    protocol.data_received(POST)
    await _settle(state, True)
    clock.advance(KEEP_ALIVE_SECONDS / 2)
    protocol.data_received(POST)
    await _settle(state, True)
    assert transport.bytes_and_closes()[0].count(b"HTTP/1.1 200 OK") == 2
    clock.advance(KEEP_ALIVE_SECONDS / 2 + 0.001)  # a timeout after the first answer
    assert not transport.closing
    clock.advance(KEEP_ALIVE_SECONDS / 2)  # and after the second
    assert transport.events[-1] == "close"
    protocol.connection_lost(None)


def answering(headers: list[tuple[bytes, bytes]], body: bytes, status: int = 200) -> Any:
    """An app answering as the /graphql entry does: through the cycle's
    ``answer`` where the server offers it (api/runtime/direct_answer.py),
    else in two messages, as under uvicorn's own protocol."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        owner = getattr(send, "__self__", None)
        if type(owner) in ANSWERS_AT_ONCE:
            pending = owner.answer(status, list(headers), body)
            if pending is not None:
                await pending
            return
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return app


LENGTH = (b"content-length", b"%d" % len(JSON))
ANSWERS: dict[str, tuple[Any, str | None]] = {
    "at once": (answering([LENGTH, (b"content-type", b"application/json")], JSON), None),
    "a request id": (answering([LENGTH, (b"X-Request-Id", b"0123456789abcdef")], JSON), None),
    "no length": (answering([(b"content-type", b"text/plain")], JSON), "body"),
    "a length too long": (answering([(b"content-length", b"999")], JSON), "body"),
    "a length too short": (answering([(b"content-length", b"2")], JSON), "body"),
    "connection close": (answering([LENGTH, (b"connection", b"close")], JSON), None),
    "empty": (answering([(b"content-length", b"0")], b"", 204), "body"),
    "a bad header value": (answering([LENGTH, (b"x-bad", b"a\nb")], JSON), None),
    "a bad header name": (answering([LENGTH, (b"x bad", b"1")], JSON), None),
}
"""Each app, and which of the cycle's fallbacks it takes (None: none)."""
FALLBACKS = {
    "body": (Lane.PROTOCOL.value, "answer's body sent as a message"),
    "messages": (Lane.PROTOCOL.value, "answer sent as messages"),
}
DEFAULTS = {
    "no default headers": [],
    "a date": [(b"date", b"Sun, 06 Dec 2026 15:00:00 GMT")],
    "a date and a server": [(b"date", b"Sun, 06 Dec 2026 15:00:01 GMT"), (b"server", b"x")],
    "a framing default": [(b"Connection", b"close")],
    "a bad default": [(b"date", b"a\rb")],
}


@pytest.mark.parametrize("defaults", DEFAULTS)
@pytest.mark.parametrize("name", ANSWERS)
async def test_an_answer_at_once_writes_what_two_messages_write(name: str, defaults: str) -> None:
    """The lean cycle's ``answer`` (twice on one connection, the server's
    default headers as uvicorn's ticks set them) against uvicorn's protocol
    sent the two messages: the same bytes and closes; taken at once, in one
    write, or sent as messages, counted."""
    app, fallback = ANSWERS[name]
    outcomes = []
    for protocol_class in (LeanHttpProtocol, HttpToolsProtocol):
        protocol, state, transport = _protocol(protocol_class, app)
        state.default_headers = DEFAULTS[defaults]
        before = dict(counts())
        for number in (1, 2):
            if not transport.closing:
                protocol.data_received(POST)
            await _settle(state, number == 2)
        if protocol.timeout_keep_alive_task is not None:
            protocol.timeout_keep_alive_task.cancel()
        outcomes.append((transport, {k: v - before.get(k, 0) for k, v in counts().items()}))
    (lean, counted), (uvicorns, _) = outcomes
    assert lean.bytes_and_closes() == uvicorns.bytes_and_closes()
    answered = lean.bytes_and_closes()[0].count(b"HTTP/1.1 ")
    taken = {key: n for key, n in counted.items() if key in FALLBACKS.values() and n}
    assert taken == ({} if fallback is None or not answered else {FALLBACKS[fallback]: answered})
    if fallback is None and answered:
        assert lean.writes == answered  # each answer in one write


async def test_an_answer_after_a_start_is_sent_as_messages() -> None:
    """A cycle that already started its response sends the answer through
    ``send``, which refuses it as uvicorn's does."""

    async def started_twice(scope: Any, receive: Any, send: Any) -> None:
        await send(_start(len(JSON)))
        await answering([LENGTH], JSON)(scope, receive, send)

    before = counts().get(FALLBACKS["messages"], 0)
    lean = await _exchange(LeanHttpProtocol, started_twice, POST)
    uvicorns = await _exchange(HttpToolsProtocol, started_twice, POST)
    assert lean.bytes_and_closes() == uvicorns.bytes_and_closes()
    assert counts().get(FALLBACKS["messages"], 0) == before + 1


GRAPHQL_REQUESTS = {
    "small query": b'{"query": "{ viewer { role brandId __typename } }"}',
    "field error": b'{"query": "{ product(id: \\"nope\\") { id } }"}',
    "invalid query": b'{"query": "{ nope }"}',
    "not JSON": b"{",
}


def _graphql_post(body: bytes, *headers: bytes) -> bytes:
    return (
        b"POST /graphql HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
        b"X-Request-Id: fixed-id\r\n%sContent-Length: %d\r\n\r\n%s"
        % (b"".join(header + b"\r\n" for header in headers), len(body), body)
    )


async def test_the_gateway_answers_the_same_bytes_on_the_lean_cycle(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The /graphql entry answers through the lean cycle's ``answer`` (one
    write per response) what it answers in messages under uvicorn's protocol,
    byte for byte; a fault planted in ``answer``'s write fails the comparison.
    Every lane on, whatever the run's default: the entry's direct path answers."""
    async with _serve(with_lanes(_settings("sqlite", request)), "sqlite") as gateway:
        await _compare_gateway(gateway.app, monkeypatch)


async def _compare_gateway(app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    requests = tuple(_graphql_post(body) for body in GRAPHQL_REQUESTS.values())
    small = GRAPHQL_REQUESTS["small query"]  # validated by its first request: then prepared
    requests += (_graphql_post(small), _graphql_post(small, b"Accept: application/json"))

    async def compared() -> tuple[Transport, Transport]:
        lean = await _exchange(LeanHttpProtocol, app, requests)
        uvicorns = await _exchange(HttpToolsProtocol, app, requests)
        return lean, uvicorns

    answers: list[Any] = []
    answer = _LeanCycle.answer

    def spied(self: Any, status: int, headers: Any, body: bytes) -> Any:
        answers.append(pending := answer(self, status, headers, body))
        return pending

    monkeypatch.setattr(_LeanCycle, "answer", spied)
    lean, uvicorns = await compared()
    assert lean.bytes_and_closes() == uvicorns.bytes_and_closes()
    assert lean.bytes_and_closes()[0].count(b"HTTP/1.1 200 OK") >= 3
    assert lean.writes == len(requests)
    assert len(answers) >= 2 and set(answers) == {None}  # each answered at once
    original = _LeanCycle._complete

    def planted(self: Any, transport: Any, data: bytes) -> None:
        original(self, transport, data.replace(b"fixed-id", b"other-id"))

    monkeypatch.setattr(_LeanCycle, "_complete", planted)
    lean, uvicorns = await compared()
    assert lean.bytes_and_closes() != uvicorns.bytes_and_closes()
