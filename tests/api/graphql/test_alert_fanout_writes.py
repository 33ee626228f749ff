"""The direct fan-out's write loop, in process: what it writes per socket,
and that it lets the rest of the process run while it writes
(docs/design.md, Alert fan-out). The frames and their order against
Strawberry's path are ``test_alert_fanout.py``'s, over a real server."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from graphql import ExecutionResult

from api.graphql import alert_fanout
from api.graphql.alert_fanout import AlertFanout, DirectSubscription
from api.runtime.direct_frames import NOT_WRITTEN, WRITTEN, IdleAnswer
from api.ws.frames import SharedPayloads
from domain.threats import product_recall
from services.pipeline.alerts.records import alert_item
from services.pipeline.live.broker import Broker, Subscriber
from services.pipeline.live.quota import SubscriptionLimits

BRAND = "B1"


class Transport:
    """A socket's transport that keeps what is written on it: whole text
    frames under 64 KiB."""

    def __init__(self, log: list[tuple[int, str]], socket: int) -> None:
        self.log = log
        self.socket = socket
        self.closing = False

    def write(self, frame: bytes) -> None:
        assert not self.closing
        start = 4 if frame[1] == 126 else 2
        self.log.append((self.socket, json.loads(frame[start:])["id"]))

    def is_closing(self) -> bool:
        return self.closing

    def get_write_buffer_size(self) -> int:
        return 0


class Frames:
    """A socket's writer: ready (its transport written at once) unless
    ``busy``, when ``write`` takes the frame."""

    def __init__(self, log: list[tuple[int, str]], socket: int, busy: bool = False) -> None:
        self.transport = Transport(log, socket)
        self.busy = busy
        self.written: list[bytes] = []

    def ready(self) -> Transport | None:
        return None if self.busy or self.transport.closing else self.transport

    def paused(self) -> bool:
        return False

    def write(self, data: bytes, frame: bytes) -> int:
        if self.transport.closing:
            return NOT_WRITTEN
        self.written.append(frame)
        self.transport.write(frame)
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


async def test_a_batch_is_looked_at_then_written_and_each_socket_keeps_its_order() -> None:
    """Every socket of a batch is asked first, then the ready ones written
    in a run: a socket with two subscriptions gets both frames in
    subscription order, a busy one (an extension, say) its frames through
    ``write``, one whose first write closed it no second frame; and every
    subscription's count of alerts not yet written is back to none."""
    broker = Broker(queue_max=8, limits=SubscriptionLimits(), overlap=timedelta(seconds=5))
    fanout = AlertFanout(lane=None, payloads=SharedPayloads())  # type: ignore[arg-type]
    group = alert_fanout._Group(sharers=None, executor=Executor())  # type: ignore[arg-type]
    log: list[tuple[int, str]] = []
    calls: list[str] = []
    sockets = [Frames(log, n, busy=(n == 2)) for n in range(5)]
    for frames in sockets:
        ready, write = frames.ready, frames.transport.write
        frames.ready = lambda ready=ready: calls.append("ready") or ready()  # type: ignore[method-assign]
        if not frames.busy:
            frames.transport.write = lambda frame, write=write: (  # type: ignore[method-assign]
                calls.append("write") or write(frame)
            )
    failing = sockets[4].transport
    fail_write = failing.write

    def closes_on_write(frame: bytes) -> None:
        fail_write(frame)
        failing.closing = True  # as uvloop's transport after a failed send

    failing.write = closes_on_write  # type: ignore[method-assign]
    members = [(frames, "1") for frames in sockets] + [(sockets[0], "2"), (sockets[4], "2")]
    subscriptions = []
    for frames, operation_id in members:
        subscription = DirectSubscription(fanout, operation_id, Context(), frames, group, "next")
        subscription.take_over(Stream(broker.add(BRAND)))
        subscriptions.append(subscription)
    broker.mark_seen(BRAND, [], datetime.now(UTC))
    assert broker.publish(_alert(0))
    await _until_written(log, 6)
    assert calls[: len(members)] == ["ready"] * len(members)  # all asked before a write
    assert [operation_id for socket, operation_id in log if socket == 0] == ["1", "2"]
    assert [operation_id for socket, operation_id in log if socket == 4] == ["1"]
    assert len(sockets[2].written) == 1  # busy: through ``write``
    assert fanout.written == 6
    assert [s._waiting for s in subscriptions[:-1]] == [0] * (len(subscriptions) - 1)
    assert subscriptions[-1]._waiting == 1  # not written: its handler ends it
