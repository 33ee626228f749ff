"""``threatAlerts`` over a WebSocket, delivered straight from the fan-out.

On Strawberry's path each subscription is a task waiting on a stream (an
async generator over graphql-core's and the extensions' per-event work), so
an idle subscription keeps a task, a generator, its extension instances and
an executor, and an alert to N subscribers resumes N tasks and awaits N
ASGI sends. Here (docs/design.md, Alert fan-out) a ``subscribe`` (legacy
graphql-ws: ``start``) whose
document the prepared lane knows, and which is ``threatAlerts`` alone, is
started by the same checks and the same resolver, whose stream then hands
its alerts over (``hand_over``): each alert the broker offers is put in one
queue for the process, and one worker runs the selection once per group of
subscribers who see the same data (``Sharers``), encodes the payload once
and writes each subscriber's ``next`` (``data``) frame on its socket at once
(``FrameWriter``). An idle subscription keeps its ``DirectSubscription``,
the broker's ``Subscriber`` and the stream it handed over.

What it does not take falls back, counted by cause
(``proofgate_fast_path_fallbacks{lane="fanout"}``), to Strawberry's path,
which answers it in its own words: another document, a text not validated
yet, extensions in the payload, spans on, over the cost budget, or any
refusal of the resolver (nothing was registered then; the full path runs
the checks again and says why). Per subscription, alerts keep their order:
one queue, one worker, each alert's groups in turn. A subscription with
``queue_max`` alerts not yet written, or written while its transport asked
to pause, is a slow consumer, closed as the broker closes one (4008).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from graphql import (
    ExecutionResult,
    FieldNode,
    GraphQLError,
    OperationDefinitionNode,
    create_source_event_stream,
)
from graphql import OperationType as CoreOperationType
from strawberry.execution.is_awaitable import optimized_is_awaitable

from api.observability.fallbacks import fell_back, took
from api.observability.request_log import record_operation
from api.observability.spans import spans_on
from api.runtime.direct_frames import (
    NOT_WRITTEN,
    WRITTEN,
    WRITTEN_PAUSED,
    FrameWriter,
    text_frame,
)
from api.settings.limits import Lane
from api.wire.errors import to_graphql_error
from api.ws.frames import SharedPayloads, encode_message
from resolvers.context import OPERATION_COST
from resolvers.threats.live_alerts import live_alert

if TYPE_CHECKING:
    from api.graphql.execution.executor import CompiledExecutor
    from api.graphql.execution.fanout import Sharers
    from api.graphql.prepared import PreparedLane
    from services.pipeline.live.broker import Subscriber
    from storage import Item

__all__ = ["AlertFanout", "DirectSubscription", "alert_fanout"]

logger = logging.getLogger("proofgate.websocket")

_ALERTS_FIELD = "threatAlerts"

SHARED_KEYS = 1024
"""Distinct ``(operation id, frame type)`` pairs shared between
subscriptions (most clients number their first subscription ``1``)."""

WRITE_BATCH = 256
"""Sockets written per turn of the event loop: an alert to 10,000 sockets is
~100 ms of writes, which would hold back every other task of the process
(requests, keep-alives, and the publisher that hands the alert to the other
workers, whose sockets then waited for this one's).
See docs/design.md, Alert fan-out."""


class _HandOver(Protocol):
    """The resolver's alert stream, as far as the fan-out takes it over
    (``resolvers/threats/subscriptions.py``)."""

    def hand_over(self, deliver: Callable[[Item], None]) -> Subscriber: ...

    def end(self) -> None: ...


class _Group:
    """The subscribers who get the same answer, and one executor of theirs
    (without a context) to run each alert for all of them."""

    __slots__ = ("__weakref__", "executor", "sharers")

    def __init__(self, sharers: Sharers, executor: CompiledExecutor) -> None:
        self.sharers = sharers
        self.executor = executor


class DirectSubscription:
    """One subscription the fan-out delivers; what its handler keeps in
    place of Strawberry's operation (``task`` None, ``end`` to stop)."""

    __slots__ = (
        "_backlog",
        "_context",
        "_fanout",
        "_limit",
        "_stalled",
        "_stream",
        "_subscriber",
        "_waiting",
        "ended",
        "frames",
        "group",
        "id",
        "key",
        "kind",
    )

    task = None

    def __init__(
        self,
        fanout: AlertFanout,
        operation_id: str,
        context: Any,
        frames: FrameWriter,
        group: _Group,
        kind: str,
    ) -> None:
        self.id = operation_id
        self.kind = kind
        """The frame's type: ``next`` (graphql-transport-ws), ``data`` (legacy graphql-ws)."""
        self.key = fanout.key_of(operation_id, kind)
        """What tells its message from another's of the same answer: one
        object for every subscription with the same id, so the write loop
        tells them apart by identity (docs/design.md, Alert fan-out)."""
        self.group = group
        self.ended = False
        self._fanout = fanout
        self._context = context
        self.frames = frames
        self._stream: _HandOver | None = None
        self._subscriber: Subscriber | None = None
        self._limit = 0
        self._waiting = 0
        """Live alerts offered and not yet written, or written while paused."""
        self._stalled = 0
        """Of those, the ones written while the transport was paused."""
        self._backlog = 0
        """Replayed alerts (``after``) still to write: not counted as waiting,
        as the stream did not count them against the queue."""

    def take_over(self, stream: _HandOver) -> None:
        self._stream = stream
        subscriber = stream.hand_over(self.deliver)
        self._limit = subscriber.limit
        self._subscriber = subscriber

    def deliver(self, item: Item) -> None:
        """A stored alert for this subscription (the broker calls it for
        each live one it offers)."""
        if self.ended:
            return
        subscriber = self._subscriber
        if subscriber is None:  # within ``hand_over``: the backlog, and what was queued
            self._backlog += 1
        elif self._waiting >= self._limit:
            subscriber.overflow()
            return
        else:
            self._waiting += 1
        self._fanout.push(self, item)

    def encode(self, result: ExecutionResult) -> bytes:
        """``result`` as this subscription's ``next`` (or ``data``) message,
        its members in the order Strawberry's handler writes them."""
        payload: dict[str, Any] = {"data": result.data}
        if result.errors:  # as ``ErrorMapper.on_stream_result`` maps an event's
            request_id = self._context.request_id
            payload["errors"] = [to_graphql_error(e, request_id).formatted for e in result.errors]
        if self.kind == "next":
            message = {"id": self.id, "type": "next", "payload": payload}
        else:
            message = {"type": self.kind, "id": self.id, "payload": payload}
        return encode_message(message, self._fanout.payloads).encode()

    def send(self, data: bytes, frame: bytes) -> int:
        """The encoded message, as a frame on this subscription's socket
        (``frame``: its bytes when no extension applies); 1 if written."""
        if self.ended:
            return 0
        return self.count(self.frames.write(data, frame))

    def count(self, written: int) -> int:
        """The slow-consumer rule's books after a write (``FrameWriter``'s
        answer); 1 if written."""
        if written == NOT_WRITTEN:
            return 0  # closing: its handler ends the subscription
        if self._backlog > 0:
            self._backlog -= 1
        elif written == WRITTEN_PAUSED:
            self._stalled += 1
        else:
            self._waiting -= 1 + self._stalled
            self._stalled = 0
        return 1

    @property
    def context(self) -> Any:
        return self._context

    def end(self) -> None:
        """Unsubscribes (a ``complete``, the socket closing)."""
        if self.ended:
            return
        self.ended = True
        stream, self._stream = self._stream, None
        if stream is not None:
            stream.end()


class AlertFanout:
    """The direct fan-out of one GraphQL app (one per process)."""

    def __init__(self, lane: PreparedLane, payloads: SharedPayloads) -> None:
        self.lane = lane
        self.payloads = payloads
        self.started = 0
        self.runs = 0
        self.written = 0
        self._groups: weakref.WeakValueDictionary[Sharers, _Group] = weakref.WeakValueDictionary()
        self._batches: deque[tuple[Item, list[DirectSubscription]]] = deque()
        self._worker: asyncio.Task[None] | None = None
        self._keys: dict[tuple[str, str], tuple[str, str]] = {}

    def key_of(self, operation_id: str, kind: str) -> tuple[str, str]:
        """The shared ``(operation id, frame type)`` of a subscription; at
        most ``SHARED_KEYS`` are shared, the rest are their own."""
        key = (operation_id, kind)
        shared = self._keys.get(key)
        if shared is not None:
            return shared
        if len(self._keys) < SHARED_KEYS:
            self._keys[key] = key
        return key

    # --- starting ------------------------------------------------------------

    async def start(
        self,
        operation_id: str,
        payload: Any,
        context: Any,
        frames: FrameWriter | None,
        kind: str = "next",
    ) -> DirectSubscription | None:
        """The subscription, started; or None, nothing done and the cause
        counted, for Strawberry's path to take."""
        if frames is None:
            fell_back(Lane.FANOUT, "server without direct frames")
            return None
        started = await self._start(operation_id, payload, context, frames, kind)
        if isinstance(started, str):
            fell_back(Lane.FANOUT, started)
            return None
        self.started += 1
        took(Lane.FANOUT)
        return started

    async def _start(
        self, operation_id: str, payload: Any, context: Any, frames: FrameWriter, kind: str
    ) -> DirectSubscription | str:
        if spans_on():
            return "spans"
        if not isinstance(payload, dict):
            return "malformed fields"
        principal = context.principal
        request = self.lane.request_of(payload, principal)
        if isinstance(request, str):
            return request
        if not _alerts_alone(request.operation):
            return "not threatAlerts alone"
        if not self.lane.within_cost(request):
            return "over the cost budget"
        executor = request.prepared.start.subscription(context, request.variables)
        if executor is None:
            return "no plan, or variables refused"
        token = OPERATION_COST.set(request.cost) if request.cost is not None else None
        try:
            source: Any = create_source_event_stream(executor)
            if optimized_is_awaitable(source):
                source = await source
        finally:
            if token is not None:
                OPERATION_COST.reset(token)
        if isinstance(source, ExecutionResult):
            return "refused"
        if not hasattr(source, "hand_over"):  # not the resolver's stream
            with contextlib.suppress(Exception):
                await source.aclose()
            return "not the alerts' stream"
        record_operation(request.operation_name, "subscription", principal)
        sharers = executor.sharers()
        assert sharers is not None  # ``subscription`` answers None without
        group = self._groups.get(sharers)
        if group is None:
            executor.context_value = None  # each run brings its own
            group = self._groups[sharers] = _Group(sharers, executor)
        subscription = DirectSubscription(self, operation_id, context, frames, group, kind)
        subscription.take_over(source)
        return subscription

    # --- delivering ----------------------------------------------------------

    def push(self, subscription: DirectSubscription, item: Item) -> None:
        """``item`` for ``subscription``, after everything pushed before it.
        The broker offers one item to every subscriber it reaches: they
        share a batch, and its alert is made once."""
        batches = self._batches
        if batches and batches[-1][0] is item:
            batches[-1][1].append(subscription)
        else:
            batches.append((item, [subscription]))
        if self._worker is None:
            self._worker = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        batches = self._batches
        try:
            while batches:
                item, subscriptions = batches.popleft()
                try:
                    await self._deliver(live_alert(item), subscriptions)
                except Exception:
                    logger.exception("Delivering an alert to its subscribers failed")
        finally:
            self._worker = None

    async def _deliver(self, event: Any, subscriptions: list[DirectSubscription]) -> None:
        groups: dict[_Group, list[DirectSubscription]] = {}
        for subscription in subscriptions:
            if not subscription.ended:
                members = groups.get(subscription.group)
                if members is None:
                    members = groups[subscription.group] = []
                members.append(subscription)
        for group, members in groups.items():
            result = await self._run(group, members[0].context, event)
            for start in range(0, len(members), WRITE_BATCH):
                # A turn of the loop before each batch, the first too: the
                # publisher that hands the alert to the other workers was
                # made ready with it, and its PUBLISH leaves before any
                # socket here is written (redis-py takes a turn to send it).
                await asyncio.sleep(0)
                self.written += self._write(result, members[start : start + WRITE_BATCH])

    @staticmethod
    def _write(result: ExecutionResult, members: list[DirectSubscription]) -> int:
        """Each member's message for ``result`` written on its socket; how
        many were written. Per socket, only what differs per socket: every
        socket is looked at first, then the ready ones written one after
        the other, the system calls in a run of their own (docs/design.md,
        Alert fan-out)."""
        written = 0
        if result.errors:  # each subscriber's errors carry its request id
            for subscription in members:
                data = subscription.encode(result)
                written += subscription.send(data, text_frame(data))
            return written
        # Messages differ only by the operation's id and the protocol:
        # one encoding and frame each (every socket of the bench has id "1").
        encoded: dict[tuple[str, str], tuple[bytes, bytes]] = {}
        last: tuple[str, str] | None = None
        data = frame = b""
        ready: list[tuple[DirectSubscription, asyncio.WriteTransport, bytes]] = []
        for subscription in members:
            if subscription.ended:
                continue
            key = subscription.key
            if key is not last:  # the key's object, not its text: see ``key_of``
                framed = encoded.get(key)
                if framed is None:
                    message = subscription.encode(result)
                    framed = encoded[key] = (message, text_frame(message))
                data, frame = framed
                last = key
            transport = subscription.frames.ready()
            if transport is None:
                written += subscription.send(data, frame)
            else:
                ready.append((subscription, transport, frame))
        for subscription, transport, frame in ready:
            if transport.is_closing():  # a socket's earlier frame failed
                continue
            transport.write(frame)
            paused = transport.get_write_buffer_size() and subscription.frames.paused()
            written += subscription.count(WRITTEN_PAUSED if paused else WRITTEN)
        return written

    async def _run(self, group: _Group, context: Any, event: Any) -> ExecutionResult:
        """The selection on ``event``, once for the group, as a subscriber's
        own execution of it would answer (errors as Strawberry makes them)."""
        self.runs += 1
        # No read budget, as on Strawberry's path (``ReadLimit`` leaves
        # subscriptions out): the planned cost, checked at the start, bounds it.
        try:
            result = group.executor.run_event(context, event)
            if type(result) is not ExecutionResult and optimized_is_awaitable(result):
                result = await result
        except Exception as error:
            unexpected = error if isinstance(error, GraphQLError) else None
            return ExecutionResult(
                None, [unexpected or GraphQLError(str(error), original_error=error)]
            )
        assert isinstance(result, ExecutionResult)
        return result


def alert_fanout(lane: PreparedLane | None, payloads: SharedPayloads) -> AlertFanout | None:
    """The fan-out for the view, or None: without the ``fanout`` lane, or
    the ``prepared`` and ``plan`` lanes it builds on, every subscription
    takes Strawberry's path (``PROOFGATE_EXECUTION``)."""
    if lane is None:
        return None
    lanes = lane.limits.execution
    if Lane.FANOUT not in lanes or Lane.PLAN not in lanes:
        return None
    return AlertFanout(lane, payloads)


def _alerts_alone(operation: OperationDefinitionNode) -> bool:
    """A subscription of the one root field ``threatAlerts``, with no
    directive on it or on the operation."""
    if operation.operation is not CoreOperationType.SUBSCRIPTION or operation.directives:
        return False
    selections = operation.selection_set.selections
    if len(selections) != 1:
        return False
    field = selections[0]
    return (
        isinstance(field, FieldNode) and field.name.value == _ALERTS_FIELD and not field.directives
    )
