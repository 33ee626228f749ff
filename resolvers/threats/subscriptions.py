"""threatAlerts: a brand's alerts, live, optionally resuming after a cursor.

The subscription registers with the broker before it reads the backlog, so
every alert committed meanwhile is either in the backlog or buffered; the
buffered copies of backlog alerts are dropped by id. Nothing falls between
replay and live, and nothing arrives twice.

The stream unsubscribes when it is closed, even if it never started (a
client that goes away at once), so no registration outlives its operation.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol, TypeVar

import strawberry

from domain.enums import Severity, ThreatType
from domain.errors import ServiceUnavailable
from domain.threats.filters import MAX_PRODUCT_IDS, AlertFilter
from domain.validation import validate_id
from services.pipeline.alerts.records import alert_facts
from services.pipeline.live.broker import Subscriber
from services.pipeline.service import Pipeline
from services.threats.filters import check_products
from storage import Item
from storage.access_patterns import BRAND_THREATS

from ..context import OPERATION_COST, Info
from ..fields import AP_METADATA
from .inputs import AlertFilterInput, legacy_filter
from .live_alerts import live_alert
from .types import ThreatAlert

__all__ = ["EventIds", "OverflowTarget", "ThreatSubscriptions"]


class OverflowTarget(Protocol):
    """What the WebSocket layer puts on the context as ``connection`` (its
    ``LiveConnection``), as far as a subscription needs it."""

    def slow_consumer(self) -> None:
        """Close the connection: a subscription's queue overflowed."""


class EventIds(Protocol):
    """What an SSE stream puts on the context as ``event_ids``: the
    ``Last-Event-ID`` a reconnecting client sent, and where each alert's
    cursor goes to become its event's ``id:``
    (docs/design.md, Subscriptions over HTTP)."""

    @property
    def last_event_id(self) -> str | None: ...

    def event_id(self, cursor: str) -> None:
        """The cursor of the alert about to be sent."""


def _overflow_handler(info: Info) -> Callable[[], None] | None:
    connection: OverflowTarget | None = getattr(info.context, "connection", None)
    return None if connection is None else connection.slow_consumer


def _event_ids(info: Info, pipeline: Pipeline) -> Callable[[Item], None] | None:
    ids: EventIds | None = getattr(info.context, "event_ids", None)
    if ids is None:
        return None
    tenant = info.context.principal.tenant
    return lambda item: ids.event_id(pipeline.cursor(item, tenant))


_F = TypeVar("_F", bound=Callable[..., Any])


def _subscription(**options: Any) -> Callable[[_F], _F]:
    """Typed as returning the resolver, like ``ap_field``, so mypy checks it."""
    decorator: Callable[[_F], _F] = strawberry.subscription(**options)
    return decorator


@strawberry.type
class ThreatSubscriptions:
    @_subscription(
        description="The brand's alerts as they are detected. With `after` (an alert cursor), "
        "first every stored alert after it, oldest first, then live ones. `filter` and "
        "`minSeverity`/`types` combine: an alert must match both.",
        metadata={AP_METADATA: BRAND_THREATS.id},
    )
    async def threat_alerts(
        self,
        info: Info,
        brand_id: strawberry.ID,
        min_severity: Severity | None = None,
        types: list[ThreatType] | None = None,
        after: str | None = None,
        filter: AlertFilterInput | None = None,
    ) -> AsyncIterator[ThreatAlert]:
        """Checks and registers before returning the stream, so a refused
        subscription is an ``error`` message, and alerts written from this
        moment on are buffered while the backlog is read."""
        context = info.context
        brand = validate_id(brand_id, field="brandId")
        context.principal.require_read(brand)
        pipeline = context.services.pipeline
        if pipeline is None:
            raise ServiceUnavailable("Live alerts are not available on this gateway")
        wanted = legacy_filter(min_severity, types)
        if filter is not None:
            asked = filter.unchecked(MAX_PRODUCT_IDS)
            await check_products(context.storage, brand, asked)
            wanted = wanted.both(asked)
        ids: EventIds | None = getattr(context, "event_ids", None)
        if ids is not None and ids.last_event_id is not None:
            after = ids.last_event_id  # a reconnect resumes after the last alert it got
        subscriber = await pipeline.subscribe(
            brand,
            _overflow_handler(info),
            key=context.principal.key_hash,
            cost=OPERATION_COST.get(),
            alert_filter=wanted,
        )
        try:
            backlog = (
                []
                if after is None
                else await pipeline.replay(brand, after, context.principal.tenant)
            )
        except BaseException:
            pipeline.unsubscribe(subscriber)
            raise
        stream = _AlertStream(pipeline, subscriber, backlog, wanted)
        stream.on_alert = _event_ids(info, pipeline)
        return stream


class _AlertStream(AsyncIterator[ThreatAlert]):
    """The backlog, then live alerts, without a repeat at the seam. A class
    rather than an async generator: a live subscription keeps it for hours,
    and an async generator's frame and the loop's record of it cost more
    (docs/design.md, Alert fan-out)."""

    __slots__ = (
        "_backlog",
        "_filter",
        "_pipeline",
        "_replayed",
        "_subscriber",
        "on_alert",
    )

    def __init__(
        self,
        pipeline: Pipeline,
        subscriber: Subscriber,
        backlog: list[Item],
        alert_filter: AlertFilter,
    ) -> None:
        self._pipeline = pipeline
        self._subscriber = subscriber
        self._backlog: list[Item] | None = list(reversed(backlog)) or None
        self._filter = alert_filter
        """For the backlog; the broker offers only live alerts that match."""
        self._replayed: set[str] | None = {
            item["id"] for item in backlog if alert_filter.matches(alert_facts(item))
        } or None
        """Backlog alerts the broker buffered too, dropped when they come live:
        only those the filter admits, as the broker offers no others."""
        self.on_alert: Callable[[Item], None] | None = None
        """Told each alert before it is sent (an SSE stream's event ids)."""

    def __aiter__(self) -> _AlertStream:
        return self

    async def __anext__(self) -> ThreatAlert:
        try:
            return await self._next()
        except BaseException:
            self._pipeline.unsubscribe(self._subscriber)
            raise

    async def _next(self) -> ThreatAlert:
        while self._backlog:
            item = self._backlog.pop()
            if not self._backlog:
                self._backlog = None
            if self._filter.matches(alert_facts(item)):
                self._sending(item)
                return ThreatAlert.from_item(item)
        while (live := await self._subscriber.next()) is not None:
            replayed = self._replayed
            if replayed is not None and live["id"] in replayed:
                replayed.discard(live["id"])
                continue
            self._sending(live)
            return live_alert(live)
        raise StopAsyncIteration

    def _sending(self, item: Item) -> None:
        if self.on_alert is not None:
            self.on_alert(item)

    async def aclose(self) -> None:
        self.end()

    def end(self) -> None:
        """Unsubscribes; what ``aclose`` does, for a caller without a loop turn."""
        self._backlog = None
        self._pipeline.unsubscribe(self._subscriber)

    def hand_over(self, deliver: Callable[[Item], None]) -> Subscriber:
        """Stops being a stream: each alert it would have returned goes to
        ``deliver`` instead, as its stored item (``live_alert`` makes one
        ``ThreatAlert`` of it for every subscriber it reaches), in the same
        order, the backlog's at once and live ones as the broker offers them,
        with no task waiting on the stream (docs/design.md, Alert fan-out).
        The subscriber, for its queue limit; ``end`` still unsubscribes."""
        backlog, self._backlog = self._backlog, None
        for item in reversed(backlog or ()):
            if self._filter.matches(alert_facts(item)):
                self._sending(item)
                deliver(item)
        if self._replayed is None and self.on_alert is None:
            # Nothing to drop at the seam or to tell: the broker calls
            # ``deliver`` itself, a call less for each subscriber an alert reaches.
            self._subscriber.divert(deliver)
            return self._subscriber

        def live(item: Item) -> None:
            replayed = self._replayed
            if replayed is not None and item["id"] in replayed:
                replayed.discard(item["id"])
                return
            self._sending(item)
            deliver(item)

        self._subscriber.divert(live)
        return self._subscriber
