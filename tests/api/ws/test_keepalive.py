"""Keep-alives below Strawberry's handler, held to the handler itself
(docs/design.md, Keep-alives): the same client scripts run against two real
``proofgate serve`` processes, one with the ``keepalive`` lane and one
without it (Strawberry's handler sends every ping and reads every pong), and
every frame each client receives, and how each connection closes, must be
the same bytes. The lane's fallback counter says which messages the handler
still took: pings before ``connection_ack`` and a ping sent in two frames
(the planted control that a ping reaching the handler is counted), and
nothing else.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from _live import ADMIN_KEY, LEGACY_WS, TRANSPORT_WS, Gateway
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from api.ws.keepalive import KA, PING, PONG

pytestmark = [pytest.mark.slow, pytest.mark.fast_paths]

KEEPALIVE_MS = 200
INIT_TIMEOUT_MS = 600
QUERY = {"id": "q", "type": "subscribe", "payload": {"query": "{ __typename }"}}
"""A message with a definite answer (``next``, ``complete``): what comes
before it was all a ping or pong caused."""


@pytest.fixture(scope="module")
async def gateways(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[dict[str, Gateway]]:
    env = {
        "PROOFGATE_WS_KEEPALIVE_MS": str(KEEPALIVE_MS),
        "PROOFGATE_WS_INIT_TIMEOUT_MS": str(INIT_TIMEOUT_MS),
    }
    lane = await Gateway(tmp_path_factory.mktemp("keepalive"), **env).start()
    library = await Gateway(
        tmp_path_factory.mktemp("keepalive-library"),
        PROOFGATE_EXECUTION="compiled,-keepalive",
        **env,
    ).start()
    try:
        yield {"lane": lane, "library": library}
    finally:
        await lane.stop()
        await library.stop()


async def _fallbacks(gateway: Gateway) -> dict[str, int]:
    response = await gateway.client.get(
        "/metrics", headers={"Authorization": f"Bearer {ADMIN_KEY}"}
    )
    found = re.findall(
        r'^proofgate_fast_path_fallbacks_total\{cause="([^"]*)",lane="keepalive"\} (\S+)$',
        response.text,
        re.MULTILINE,
    )
    return {cause: int(float(count)) for cause, count in found}


class _Recorder:
    """The client connection, recording every frame it receives."""

    def __init__(self, socket: ClientConnection) -> None:
        self.socket = socket
        self.frames: list[str] = []

    async def send(self, message: str | list[str]) -> None:
        await self.socket.send(message)

    async def recv(self, timeout: float = 5) -> str:
        frame = await asyncio.wait_for(self.socket.recv(), timeout)
        assert isinstance(frame, str)
        self.frames.append(frame)
        return frame

    async def until(self, kind: str, answer_pings: bool = False) -> None:
        """Reads until a message of ``kind``; ``answer_pings``: answering the
        server's pings meanwhile, as a client does, only while nothing else is
        in flight, so the handler waits for a message when each pong comes
        and the lane's counter is exact."""
        while True:
            message = json.loads(await self.recv())
            if message["type"] == "ping" and answer_pings:
                await self.send(json.dumps({"type": "pong"}, separators=(",", ":")))
            if message["type"] == kind:
                return

    async def closed(self) -> None:
        with pytest.raises(ConnectionClosed):
            while True:
                await self.recv(10)

    async def init(self) -> None:
        await self.send('{"type":"connection_init","payload":{}}')
        await self.until("connection_ack")


Script = Callable[[_Recorder], Awaitable[None]]
KEEPALIVES = frozenset({'{"type":"ping"}', '{"type":"ka"}'})
"""The server's keep-alives, which come when the clock says: left out of the
frames compared (their bytes are compared by the last test), so only a ping
or ``ka`` in another form would show there."""


async def _run(gateway: Gateway, protocol: str, script: Script) -> list[str]:
    """What the client received, frame by frame as text, but the server's
    keep-alives, then how its connection closed."""
    async with connect(gateway.ws_url, subprotocols=[protocol]) as socket:  # type: ignore[list-item]
        recorder = _Recorder(socket)
        with contextlib.suppress(ConnectionClosed):
            await script(recorder)
        await socket.close()
        kept = [frame for frame in recorder.frames if frame not in KEEPALIVES]
        return [*kept, f"closed {socket.close_code} {socket.close_reason}"]


async def _pings_and_pongs(client: _Recorder) -> None:
    """A client's pings in several forms, unsolicited pongs, and pongs to the
    server's keep-alives; each step ends with a query's answer."""
    await client.init()
    forms = [
        '{"type":"ping"}',
        '{"type": "ping"}',
        '{"type":"ping","payload":{"at":1}}',
        '{"type":"pong"}',
        '{ "type" : "pong", "payload": {"x": [1, 2]} }',
    ]
    for form in forms:
        await client.send(form)
        if "ping" in form:
            await client.until("pong")
        await client.send(json.dumps(QUERY))
        await client.until("complete")
    for _ in range(3):
        await client.until("ping", answer_pings=True)  # the pong, read by the lane's protocol
    await client.send(json.dumps(QUERY))
    await client.until("complete")


async def _ping_before_init_then_silence(client: _Recorder) -> None:
    """A ping before ``connection_init`` is answered; the connection is then
    closed for not initialising (4408), by the same timer on both."""
    await client.send('{"type":"ping"}')
    await client.until("pong")
    await client.closed()  # 4408, the init timeout


async def _pings_unanswered(client: _Recorder) -> None:
    """A client that never answers the server's pings keeps its connection:
    neither path closes it for that."""
    await client.init()
    for _ in range(3):
        await client.until("ping", answer_pings=False)
    await client.send(json.dumps(QUERY))
    await client.until("complete", answer_pings=False)


async def _ping_in_two_frames(client: _Recorder) -> None:
    """A fragmented ping: the handler takes it, and answers it the same."""
    await client.init()
    await client.send(['{"type":', '"ping"}'])
    await client.until("pong")
    await client.send(json.dumps(QUERY))
    await client.until("complete")


def _malformed(text: str) -> Script:
    async def script(client: _Recorder) -> None:
        await client.init()
        await client.send(text)
        await client.closed()

    return script


async def _legacy_keepalives(client: _Recorder) -> None:
    await client.send('{"type":"connection_init","payload":{}}')
    await client.until("connection_ack")
    for _ in range(3):
        await client.until("ka")


SCRIPTS: dict[str, tuple[str, Script]] = {
    "pings and pongs": (TRANSPORT_WS, _pings_and_pongs),
    "ping before init": (TRANSPORT_WS, _ping_before_init_then_silence),
    "pings unanswered": (TRANSPORT_WS, _pings_unanswered),
    "ping in two frames": (TRANSPORT_WS, _ping_in_two_frames),
    "pong, malformed": (TRANSPORT_WS, _malformed('{"type":"pong"')),
    "pong, not an object": (TRANSPORT_WS, _malformed('["pong"]')),
    "pong, no type": (TRANSPORT_WS, _malformed('{"typ":"pong"}')),
    "legacy ka": (LEGACY_WS, _legacy_keepalives),
}


@pytest.mark.parametrize("name", list(SCRIPTS))
async def test_the_lane_answers_as_strawberrys_handler(
    gateways: dict[str, Gateway], name: str
) -> None:
    protocol, script = SCRIPTS[name]
    before = await _fallbacks(gateways["lane"])
    lane = await _run(gateways["lane"], protocol, script)
    library = await _run(gateways["library"], protocol, script)
    assert lane == library
    assert len(lane) > 1
    counted = await _fallbacks(gateways["lane"])
    new = {cause: counted[cause] - before.get(cause, 0) for cause in counted}
    expected = {
        "ping before init": {"before connection_ack": 1},
        "ping in two frames": {"handler busy, or not one frame": 1},
    }.get(name, {})
    assert {cause: n for cause, n in new.items() if n} == expected


async def test_keepalives_are_the_frames_made_once(gateways: dict[str, Gateway]) -> None:
    """The frames the lane writes are the messages the handler would send."""
    assert (PING.data, PONG.data, KA.data) == (
        b'{"type":"ping"}',
        b'{"type":"pong"}',
        b'{"type":"ka"}',
    )
    frames: dict[str, list[str]] = {}
    for name, gateway in gateways.items():
        async with connect(gateway.ws_url, subprotocols=[TRANSPORT_WS]) as socket:  # type: ignore[list-item]
            await socket.send('{"type":"connection_init","payload":{}}')
            frames[name] = [str(await socket.recv()) for _ in range(2)]
    assert frames["lane"] == frames["library"] == ['{"type":"connection_ack"}', '{"type":"ping"}']
