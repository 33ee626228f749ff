"""The direct fan-out's write loop, in process: what it writes per socket,
and that it lets the rest of the process run while it writes
(docs/design.md, Alert fan-out). The frames and their order against
Strawberry's path are ``test_alert_fanout.py``'s, over a real server."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from socket import socket as Socket
from socket import socketpair
from typing import Any

import pytest
from graphql import ExecutionResult

from api.graphql import alert_fanout
from api.graphql.alert_fanout import AlertFanout, DirectSubscription
from api.observability import fallbacks
from api.runtime.direct_frames import NOT_LENT, WRITTEN, IdleAnswer
from api.runtime.lent_writes import SHARED_FROM, LentWrites
from api.settings.limits import Lane
from api.ws.frames import SharedPayloads
from domain.threats import product_recall
from services.pipeline.alerts.records import alert_item
from services.pipeline.live.broker import Broker, Subscriber
from services.pipeline.live.quota import SubscriptionLimits

BRAND = "B1"


class Frames:
    """A socket that keeps what is written on it."""

    def __init__(self, log: list[tuple[int, str]], socket: int) -> None:
        self.log = log
        self.socket = socket

    def write(self, data: bytes, frame: bytes) -> int:
        self.log.append((self.socket, json.loads(data)["id"]))
        return WRITTEN

    def write_ready(self, data: bytes, frame: bytes) -> int:
        return self.write(data, frame)

    def answer_idle(self, answer: IdleAnswer | None) -> None:
        pass


class Executor:
    def run_event(self, context: Any, event: Any) -> ExecutionResult:
        return ExecutionResult({"threatAlerts": {"id": event.id}}, None)


class Stream:
    """The resolver's stream as the fan-out takes it over."""

    def __init__(self, subscriber: Subscriber) -> None:
        self.subscriber = subscriber

    def hand_over(self, deliver: Any) -> Subscriber:
        self.subscriber.divert(deliver)
        return self.subscriber

    def end(self) -> None:
        self.subscriber.close()


class Context:
    request_id = "request-1"


def _subscribed(ids: list[str]) -> tuple[Broker, AlertFanout, list[tuple[int, str]]]:
    broker = Broker(queue_max=8, limits=SubscriptionLimits(), overlap=timedelta(seconds=5))
    fanout = AlertFanout(lane=None, payloads=SharedPayloads())  # type: ignore[arg-type]
    group = alert_fanout._Group(sharers=None, executor=Executor())  # type: ignore[arg-type]
    log: list[tuple[int, str]] = []
    for socket, operation_id in enumerate(ids):
        frames = Frames(log, socket)
        subscription = DirectSubscription(fanout, operation_id, Context(), frames, group, "next")
        subscription.take_over(Stream(broker.add(BRAND)))
    broker.mark_seen(BRAND, [], datetime.now(UTC))
    return broker, fanout, log


def _alert(index: int) -> dict[str, Any]:
    now = datetime.now(UTC)
    draft = product_recall(brand_id=BRAND, product_id=f"P{index}", recalled_at=now, reason=None)
    return alert_item(draft, now + timedelta(microseconds=index))


@pytest.mark.parametrize(("batch", "seen"), [(3, [0, 3, 6, 7]), (100, [0, 7])])
async def test_the_loop_runs_other_tasks_between_batches_of_sockets(
    monkeypatch: pytest.MonkeyPatch, batch: int, seen: list[int]
) -> None:
    """A task that looks at every turn of the loop sees the 7 sockets written
    3 a turn with batches of 3, and all at once with batches larger than the
    fan-out (the positive control)."""
    monkeypatch.setattr(alert_fanout, "WRITE_BATCH", batch)
    broker, _, log = _subscribed(["1"] * 7)
    assert broker.publish(_alert(0))
    assert await asyncio.create_task(_counts(log, 7)) == seen
    assert [socket for socket, _ in log] == list(range(7))


async def test_a_task_made_ready_with_the_alert_goes_before_the_first_socket() -> None:
    """The publisher to the other workers is made ready by the alert, before
    the fan-out's worker, and takes a turn of the loop before it writes its
    PUBLISH (redis-py's): the worker lets it, so no socket here is written
    before the other workers hear of the alert."""
    broker, _, log = _subscribed(["1"] * 7)

    async def publisher() -> int:
        await asyncio.sleep(0)
        return len(log)

    task = asyncio.create_task(publisher())
    assert broker.publish(_alert(0))
    assert await task == 0
    await _until_written(log, 7)


async def _counts(log: list[tuple[int, str]], count: int) -> list[int]:
    """How many sockets were written, at each turn of the loop until ``count``."""
    seen = [len(log)]
    async with asyncio.timeout(5):
        while seen[-1] < count:
            await asyncio.sleep(0)
            if len(log) != seen[-1]:
                seen.append(len(log))
    return seen


async def _until_written(log: list[tuple[int, str]], count: int) -> None:
    async with asyncio.timeout(5):
        while len(log) < count:
            await asyncio.sleep(0)


async def test_each_socket_gets_its_own_operation_id_whether_its_key_is_shared_or_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ids are made apart (as each message parses its own), two keys are
    shared and the third id's is not (``SHARED_KEYS``): every socket's
    frame still carries its own id, in subscription order, alert by alert."""
    monkeypatch.setattr(alert_fanout, "SHARED_KEYS", 2)
    ids = ["".join(text) for text in (["1"], ["a"], ["1"], ["z"], ["z"], ["a"])]
    broker, fanout, log = _subscribed(ids)
    assert len(fanout._keys) == 2
    for index in range(3):
        assert broker.publish(_alert(index))
    await _until_written(log, 3 * len(ids))
    expected = [(socket, operation_id) for socket, operation_id in enumerate(ids)]
    assert log == expected * 3
    assert fanout.written == 3 * len(ids)


def test_subscriptions_with_one_id_share_one_key_object() -> None:
    fanout = AlertFanout(lane=None, payloads=SharedPayloads())  # type: ignore[arg-type]
    first = fanout.key_of("".join(["1"]), "next")
    assert fanout.key_of("".join(["1"]), "next") is first
    assert fanout.key_of("1", "data") is not first


class SocketFrames:
    """A socket's writer over a real socket pair: lent unless ``busy``
    (its transport holding data), its frames read back from the peer."""

    def __init__(self, ours: Socket, busy: bool = False) -> None:
        self.ours = ours
        self.busy = busy
        self.through_transport: list[bytes] = []

    def lend(self) -> int:
        return NOT_LENT if self.busy else self.ours.fileno()

    def write(self, data: bytes, frame: bytes) -> int:
        self.through_transport.append(frame)
        self.ours.send(frame)
        return WRITTEN

    def write_rest(self, rest: bytes) -> int:
        return self.write(rest, rest)

    def write_ready(self, data: bytes, frame: bytes) -> int:
        return self.write(data, frame)

    def answer_idle(self, answer: IdleAnswer | None) -> None:
        pass


def _ids_read(peer: Socket, frames: int) -> list[str]:
    """The operation ids of ``frames`` text frames (each under 64 KiB) read
    from ``peer``, which sends nothing else."""
    ids: list[str] = []
    buffered = b""
    peer.settimeout(5)
    while len(ids) < frames:
        buffered += peer.recv(65536)
        while len(buffered) >= 4:
            assert buffered[0] == 0x81  # a whole, final text frame
            start, length = 2, buffered[1]
            if length == 126:
                start, length = 4, int.from_bytes(buffered[2:4])
            if len(buffered) < start + length:
                break
            ids.append(json.loads(buffered[start : start + length])["id"])
            buffered = buffered[start + length :]
    assert buffered == b""
    return ids


async def test_lent_frames_reach_every_socket_once_in_order_and_the_books_balance() -> None:
    """Past ``SHARED_FROM`` sockets, so both threads write: a socket with two
    subscriptions gets both frames of each alert in subscription order (the
    second after the lent first, never beside it), a socket whose transport
    holds data gets its frames through ``write``, and every subscription's
    count of alerts not yet written is back to none."""
    broker = Broker(queue_max=8, limits=SubscriptionLimits(), overlap=timedelta(seconds=5))
    writers = LentWrites()
    fanout = AlertFanout(lane=None, payloads=SharedPayloads(), writers=writers)  # type: ignore[arg-type]
    group = alert_fanout._Group(sharers=None, executor=Executor())  # type: ignore[arg-type]
    pairs = [socketpair() for _ in range(2 * SHARED_FROM)]
    sockets = [SocketFrames(ours, busy=(n == 1)) for n, (ours, _) in enumerate(pairs)]
    subscriptions = []
    # The first socket's second subscription last: in the other thread's half.
    for frames, operation_id in [(frames, "1") for frames in sockets] + [(sockets[0], "2")]:
        subscription = DirectSubscription(fanout, operation_id, Context(), frames, group, "next")
        subscription.take_over(Stream(broker.add(BRAND)))
        subscriptions.append(subscription)
    broker.mark_seen(BRAND, [], datetime.now(UTC))
    lent = fallbacks.taken().get(Lane.WRITERS, 0)
    try:
        for index in range(3):
            assert broker.publish(_alert(index))
        async with asyncio.timeout(5):
            while fanout.written < 3 * len(subscriptions):
                await asyncio.sleep(0.01)
        assert _ids_read(pairs[0][1], 6) == ["1", "2"] * 3
        assert [_ids_read(peer, 3) for _, peer in pairs[1:]] == [["1"] * 3] * (len(pairs) - 1)
        assert len(sockets[1].through_transport) == 3  # busy: never lent
        assert len(sockets[0].through_transport) == 3  # the second subscription's
        assert fallbacks.taken().get(Lane.WRITERS, 0) == lent + 3 * (len(pairs) - 1)
        assert [s._waiting for s in subscriptions] == [0] * len(subscriptions)
    finally:
        writers.close()
        for ours, peer in pairs:
            ours.close()
            peer.close()
