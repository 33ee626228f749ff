"""The fan-out benchmark's C client (``bench/fanout.c``): against a real
gateway, every socket gets each alert exactly once and the times are on the
caller's clock; against a scripted server, the framing a gateway rarely sends;
and every failure ends the client with a one-line reason."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench._fanout_client import FanoutError, fanout
from bench.alerts import VERIFY, _all_subscribed, _graphql, _seed, subscription_messages
from tests.bench._scripted_server import Peer, frame, scripted_server, text

pytestmark = pytest.mark.slow

SOCKETS = 20
THREATS = """query($b: ID!) {
    brand(id: $b) { threats(first: 10) { edges { node { id type } } } }
}"""
INIT = {"type": "connection_init", "payload": {"authorization": "Bearer scripted"}}
SUBSCRIBE = {"id": "1", "type": "subscribe", "payload": {"query": "subscription { x }"}}


def _alert(message: dict[str, Any]) -> dict[str, Any]:
    alert: dict[str, Any] = message["payload"]["data"]["threatAlerts"]
    return alert


async def test_every_socket_gets_each_alert_once_at_a_time_on_the_callers_clock(
    fanout_binary: Path, gateway_port: int
) -> None:
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{gateway_port}") as client:
        brand, key, codes = await _seed(client, 2)
        init, subscribe = subscription_messages(key, brand)
        received = []
        async with fanout(
            fanout_binary,
            gateway_port,
            sockets=SOCKETS,
            alerts=len(codes),
            init=init,
            subscribe=subscribe,
            timeout=10,
        ) as subscribers:
            await subscribers.ready()
            await _all_subscribed(client, SOCKETS)
            for code in codes:
                sent = time.monotonic_ns()
                await _graphql(client, VERIFY, {"c": code})
                arrival = await subscribers.arrival()
                assert len(arrival.times_ns) == SOCKETS
                assert all(0 < stamp - sent < 10**10 for stamp in arrival.times_ns)
                received.append(_alert(arrival.message))
            await subscribers.finish()
        stored = await _graphql(client, THREATS, {"b": brand}, key)
    edges = stored["brand"]["threats"]["edges"]
    assert sorted(alert["id"] for alert in received) == sorted(e["node"]["id"] for e in edges)
    assert {alert["type"] for alert in received} == {"CLAIMED_PRODUCT_SCAN"}


async def test_a_wrong_key_ends_the_client_with_the_gateways_close_reason(
    fanout_binary: Path, gateway_port: int
) -> None:
    init, subscribe = subscription_messages("pg_not-a-real-key", "some-brand")
    async with fanout(
        fanout_binary, gateway_port, sockets=3, alerts=1, init=init, subscribe=subscribe, timeout=10
    ) as subscribers:
        with pytest.raises(
            FanoutError, match=r"exited with 1: fanout: socket \d: closed by the server: 4403"
        ):
            await subscribers.ready()


async def _framing(peer: Peer) -> None:
    """Two frames in one write, then the answers the client owes them."""
    await peer.send(frame(0x9, b"are you there") + text({"type": "ping"}))
    assert await peer.receive() == (0xA, b"are you there")
    assert await peer.receive() == (0x1, b'{"type":"pong"}')


def _next(alert_id: str, padding: int) -> bytes:
    """The alert's own ``type`` comes before the message's, which the client
    must not mistake for it."""
    alert = {"id": alert_id, "type": "CLAIMED_PRODUCT_SCAN", "pad": "x" * padding}
    return text({"id": "1", "payload": {"data": {"threatAlerts": alert}}, "type": "next"})


async def test_split_batched_16_and_64_bit_frames_are_read_and_pings_answered(
    fanout_binary: Path,
) -> None:
    completed: list[int] = []

    async def script(peer: Peer) -> None:
        await _framing(peer)
        short, long = _next("a0", 300), _next("a1", 70_000)
        assert short[1] == 126 and long[1] == 127
        # Split inside the head, inside the 16-bit length, inside the payload.
        await peer.send(short[:1], short[1:3], short[3:100], pause=0.05)
        await asyncio.sleep(0.05)
        completed.append(time.monotonic_ns())
        await peer.send(short[100:] + text({"type": "pong"}) + long[:5000])
        await peer.send(long[5000:], pause=0.05)
        assert await peer.receive() == (0x8, b"\x03\xe8")

    async with (
        scripted_server(script) as (port, outcome),
        fanout(
            fanout_binary, port, sockets=1, alerts=2, init=INIT, subscribe=SUBSCRIBE, timeout=5
        ) as subscribers,
    ):
        await subscribers.ready()
        first, second = await subscribers.arrival(), await subscribers.arrival()
        await subscribers.finish()
        await asyncio.wait_for(outcome, 5)
    assert 0 <= first.times_ns[0] - completed[0] < 10**9
    assert [_alert(first.message)["id"], _alert(second.message)["id"]] == ["a0", "a1"]
    assert len(_alert(second.message)["pad"]) == 70_000


async def _until_closed(peer: Peer) -> None:
    await peer.reader.read()


def _ending(piece: bytes) -> Any:
    async def script(peer: Peer) -> None:
        await _framing(peer)
        await peer.send(piece)
        await _until_closed(peer)

    return script


@pytest.mark.parametrize(
    ("script", "reason"),
    [
        (_ending(frame(0x8, b"\x11\x33Forbidden")), "closed by the server: 4403 Forbidden"),
        (
            _ending(text({"id": "1", "type": "error", "payload": [{"message": "no"}]})),
            "the server sent error: ",
        ),
        (_ending(text({"id": "1", "type": "complete"})), "the server sent complete"),
        (_ending(b"\x81\x85abcd12345"), "a masked frame from the server"),
        (_ending(b""), "timed out after 300 ms waiting for alert 0: 0 of 1 sockets have it"),
    ],
    ids=["close-frame", "error-message", "complete", "masked-frame", "timeout"],
)
async def test_the_client_fails_loudly_with_one_line(
    fanout_binary: Path, script: Any, reason: str
) -> None:
    async with (
        scripted_server(script) as (port, outcome),
        fanout(
            fanout_binary, port, sockets=1, alerts=1, init=INIT, subscribe=SUBSCRIBE, timeout=0.3
        ) as subscribers,
    ):
        await subscribers.ready()
        with pytest.raises(FanoutError) as failure:
            await subscribers.arrival()
        await asyncio.wait_for(outcome, 5)
    message = str(failure.value)
    assert message.startswith("the fan-out client exited with 1: fanout: ")
    assert reason in message and "\n" not in message


async def test_sockets_that_disagree_on_an_alert_fail_the_run(fanout_binary: Path) -> None:
    served = 0

    async def script(peer: Peer) -> None:
        nonlocal served
        served += 1
        await peer.send(_next(f"alert-{served}", 0))
        await _until_closed(peer)

    async with (
        scripted_server(script) as (port, _),
        fanout(
            fanout_binary, port, sockets=2, alerts=1, init=INIT, subscribe=SUBSCRIBE, timeout=5
        ) as subscribers,
    ):
        await subscribers.ready()
        with pytest.raises(FanoutError, match="alert 0 differs from the other sockets'"):
            await subscribers.arrival()


async def test_the_messages_reach_the_server_as_given(fanout_binary: Path) -> None:
    seen: list[Peer] = []

    async def script(peer: Peer) -> None:
        seen.append(peer)
        await peer.send(_next("a0", 0))
        await _until_closed(peer)

    async with (
        scripted_server(script) as (port, outcome),
        fanout(
            fanout_binary, port, sockets=1, alerts=1, init=INIT, subscribe=SUBSCRIBE, timeout=5
        ) as subscribers,
    ):
        await subscribers.ready()
        assert _alert((await subscribers.arrival()).message)["id"] == "a0"
        await subscribers.finish()
        await asyncio.wait_for(outcome, 5)
    assert (seen[0].init, seen[0].subscribe) == (INIT, SUBSCRIBE)


async def test_a_bad_argument_is_refused_with_the_range(fanout_binary: Path) -> None:
    async with fanout(
        fanout_binary, 1, sockets=0, alerts=1, init=INIT, subscribe=SUBSCRIBE, timeout=5
    ) as subscribers:
        with pytest.raises(FanoutError, match="SOCKETS must be a whole number from 1 to 100000"):
            await subscribers.ready()


async def test_sockets_take_the_subscribe_messages_in_turn_and_zero_alerts_holds_them(
    fanout_binary: Path,
) -> None:
    """Socket I sends message I modulo their count; with ``alerts=0`` a socket
    that gets a ``next`` the others do not get takes it and keeps reading."""
    seen: list[Peer] = []
    answered = asyncio.Event()

    async def script(peer: Peer) -> None:
        seen.append(peer)
        if len(seen) == 1:
            await peer.send(_next("only-this-socket", 0))
            await _framing(peer)  # answered after the next: still reading
            answered.set()
        await _until_closed(peer)

    messages = [{**SUBSCRIBE, "id": "even"}, {**SUBSCRIBE, "id": "odd"}]
    async with (
        scripted_server(script) as (port, _),
        fanout(
            fanout_binary, port, sockets=3, alerts=0, init=INIT, subscribe=messages, timeout=5
        ) as held,
    ):
        await held.ready()
        await asyncio.wait_for(answered.wait(), 5)
        held.holding()
    assert sorted(peer.subscribe["id"] for peer in seen) == ["even", "even", "odd"]
