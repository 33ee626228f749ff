"""In-process fan-out of alerts to live subscriptions.

The relay publishes an alert the moment it is written; the tailer publishes
alerts other processes wrote. Both may offer the same alert, so the broker
remembers, per watched brand, the ids it has passed on within the tail
overlap and drops repeats.

Each subscription has a bounded queue. A subscriber that falls ``queue_max``
alerts behind is not silently skipped or allowed to grow: it is closed and
told why through ``on_overflow``, which disconnects the client.

A subscription's filter lives in its brand's ``FilterIndex``: an alert is
offered only to the subscriptions whose filter it matches, found without a
loop over the brand's subscriptions (docs/design.md, Alert filters).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta

from domain.datetimes import parse_datetime
from domain.threats.filters import AlertFilter, FilterIndex
from services.pipeline.alerts.records import alert_facts
from services.pipeline.live.quota import SubscriptionLimits, SubscriptionQuota
from storage import Item

__all__ = ["Broker", "Subscriber"]

logger = logging.getLogger("proofgate.pipeline")

_EVERYTHING = AlertFilter()


class Subscriber:
    """One live subscription's queue. ``next`` returns None once closed."""

    __slots__ = (
        "_closed",
        "_limit",
        "_on_overflow",
        "_queue",
        "_sink",
        "_waiter",
        "brand_id",
        "cost",
        "filter",
        "key",
        "overflowed",
    )

    def __init__(
        self,
        brand_id: str,
        limit: int,
        on_overflow: Callable[[], None] | None,
        *,
        key: str | None = None,
        cost: int = 0,
        alert_filter: AlertFilter | None = None,
    ) -> None:
        self.brand_id = brand_id
        self.filter = alert_filter or _EVERYTHING
        """Which of the brand's alerts it is offered."""
        self.key = key
        """The API key (its hash) that holds the subscription, for its quota."""
        self.cost = cost
        """What the subscription's selection plans to read per alert."""
        self.overflowed = False
        self._limit = limit
        self._on_overflow = on_overflow
        # The queue on first use, and a future only while someone waits: an
        # idle subscription should cost as little as possible, and most are idle.
        self._queue: deque[Item] | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._sink: Callable[[Item], None] | None = None
        self._closed = False

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def offer(self, item: Item) -> None:
        if self._closed:
            return
        if self._sink is not None:
            self._sink(item)
            return
        if self._queue is None:
            self._queue = deque()
        if len(self._queue) >= self._limit:
            self.overflow()
            return
        self._queue.append(item)
        self._wake()

    @property
    def limit(self) -> int:
        """Alerts that may wait for the subscriber before it is a slow consumer."""
        return self._limit

    def overflow(self) -> None:
        """Closes the subscription as a slow consumer, told through ``on_overflow``."""
        self.overflowed = True
        on_overflow = self._on_overflow
        self.close()
        if on_overflow is not None:
            on_overflow()

    def divert(self, sink: Callable[[Item], None]) -> None:
        """Every alert from now on goes to ``sink`` as it is offered, those
        queued first, in order: the direct fan-out takes the subscription
        over from its stream, and must count what waits itself
        (``overflow`` past ``limit``; docs/design.md, Alert fan-out)."""
        queued, self._queue = self._queue, None
        self._sink = sink
        for item in queued or ():
            if self._closed:
                return
            sink(item)

    async def next(self) -> Item | None:
        while not self._queue:
            if self._closed:
                return None
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        item = self._queue.popleft()
        if not self._queue:
            # Drained: an idle subscription keeps no queue (600 bytes empty).
            self._queue = None
        return item

    def close(self) -> None:
        self._closed = True
        self._queue = None
        # Lets go of the connection: a cancelled subscription's frames may
        # wait for a full collection, its socket need not.
        self._on_overflow = None
        self._sink = None
        self._wake()

    @property
    def closed(self) -> bool:
        return self._closed

    def __len__(self) -> int:
        return 0 if self._queue is None else len(self._queue)


class _Seen:
    """Ids passed on for one brand, forgotten once older than the horizon."""

    __slots__ = ("ids", "newest", "started")

    def __init__(self) -> None:
        self.ids: dict[str, datetime] = {}
        self.newest: datetime | None = None
        self.started: datetime | None = None
        """When the tailer primed the brand; None until then."""

    def add(self, alert_id: str, recorded_at: datetime) -> bool:
        if alert_id in self.ids:
            return False
        self.ids[alert_id] = recorded_at
        if self.newest is None or recorded_at > self.newest:
            self.newest = recorded_at
        return True

    def forget_before(self, horizon: datetime) -> None:
        self.ids = {k: v for k, v in self.ids.items() if v >= horizon}


class Broker:
    def __init__(self, *, queue_max: int, limits: SubscriptionLimits, overlap: timedelta) -> None:
        self._queue_max = queue_max
        self._quota = SubscriptionQuota(limits)
        self._overlap = overlap
        self._subscribers: dict[str, FilterIndex[Subscriber]] = {}
        self._seen: dict[str, _Seen] = {}

    def add(
        self,
        brand_id: str,
        on_overflow: Callable[[], None] | None = None,
        *,
        key: str | None = None,
        cost: int = 0,
        alert_filter: AlertFilter | None = None,
    ) -> Subscriber:
        """Raises, registering nothing, when the process, ``key`` or the brand
        is at its limit (``SubscriptionQuota``); ``alert_filter``'s values count."""
        subscriber = Subscriber(
            brand_id, self._queue_max, on_overflow, key=key, cost=cost, alert_filter=alert_filter
        )
        self._quota.take(brand_id, key, cost, subscriber.filter.size)
        self._subscribers.setdefault(brand_id, FilterIndex()).add(subscriber, subscriber.filter)
        self._seen.setdefault(brand_id, _Seen())
        return subscriber

    def remove(self, subscriber: Subscriber) -> None:
        subscriber.close()
        subscribers = self._subscribers.get(subscriber.brand_id)
        if subscribers is None or subscriber not in subscribers:
            return
        subscribers.remove(subscriber)
        self._quota.give_back(
            subscriber.brand_id, subscriber.key, subscriber.cost, subscriber.filter.size
        )
        if not subscribers:
            del self._subscribers[subscriber.brand_id]
            self._seen.pop(subscriber.brand_id, None)

    def watched(self) -> list[str]:
        """Brands with at least one live subscription here."""
        return list(self._subscribers)

    def is_watched(self, brand_id: str) -> bool:
        return brand_id in self._subscribers

    @property
    def subscription_count(self) -> int:
        return self._quota.count

    def mark_seen(self, brand_id: str, items: Iterable[Item], started: datetime) -> None:
        """Alerts that existed before a brand was watched: never live news."""
        seen = self._seen.get(brand_id)
        if seen is None:
            return
        for item in items:
            seen.add(item["id"], parse_datetime(item["recordedAt"]))
        seen.started = started

    def started(self, brand_id: str) -> datetime | None:
        """When tailing of ``brand_id`` began; None if not watched or not primed."""
        seen = self._seen.get(brand_id)
        return None if seen is None else seen.started

    def publish(self, item: Item) -> bool:
        """Offers a stored alert to its brand's subscribers; False if nobody
        here watches the brand or the alert was already passed on."""
        brand_id = item["brandId"]
        seen = self._seen.get(brand_id)
        if seen is None or not seen.add(item["id"], parse_datetime(item["recordedAt"])):
            return False
        subscribers = self._subscribers.get(brand_id)
        if subscribers is not None:
            matched = (
                list(subscribers.keys())
                if subscribers.unfiltered
                else subscribers.match(alert_facts(item))
            )
            for subscriber in matched:
                subscriber.offer(item)
        self._forget(seen)
        return True

    def _forget(self, seen: _Seen) -> None:
        """Ids older than two overlaps behind the newest go, by count (over
        ``2 * queue_max``) or once the oldest is four overlaps behind: at
        most one pass per two overlaps, and a quiet brand's ids do not pile
        up for hours below the count (docs/design.md, Memory growth)."""
        newest = seen.newest
        if newest is None or not seen.ids:
            return
        oldest = next(iter(seen.ids.values()))
        if len(seen.ids) > 2 * self._queue_max or oldest < newest - 4 * self._overlap:
            seen.forget_before(newest - 2 * self._overlap)

    def remembered(self, brand_id: str) -> int:
        """How many alert ids of ``brand_id`` the broker holds to drop repeats."""
        seen = self._seen.get(brand_id)
        return 0 if seen is None else len(seen.ids)

    def newest(self, brand_id: str) -> datetime | None:
        seen = self._seen.get(brand_id)
        return None if seen is None else seen.newest

    def close(self) -> None:
        for subscribers in list(self._subscribers.values()):
            for subscriber in list(subscribers.keys()):
                self.remove(subscriber)
