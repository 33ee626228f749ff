"""The pipeline of one gateway process: relay, tailer and broker together.

Built once at start-up, before the ``Services`` that commands use, so those
are built with its committing storage (``start`` in the app's lifespan,
``stop`` at shutdown). Commands hand it events through ``Services.enqueue``;
subscriptions follow a brand's alerts through it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from datetime import UTC, datetime

from domain.errors import BadUserInput, InvalidCursor
from domain.threats.filters import AlertFilter
from services.pipeline.alerts.records import ALERT_SORT
from services.pipeline.committing import CommittingStorage, Handover
from services.pipeline.events import OutboxEvent
from services.pipeline.live.broker import Broker, Subscriber
from services.pipeline.live.cancellation import cancellations, raise_if_cancelled
from services.pipeline.live.messages import MESSAGE_KEY_LABEL
from services.pipeline.live.tailer import Tailer, read_alerts_since
from services.pipeline.live.transport import AlertTransport, TableTransport
from services.pipeline.outbox.backlog import Backlog, measure_backlog
from services.pipeline.outbox.items import outbox_put
from services.pipeline.relay import Relay
from services.pipeline.settings import PipelineSettings
from services.webhooks.items import DeliveryStatus
from services.webhooks.selections import WebhookSelections
from storage import CursorCodec, Item, Storage, WriteAction
from storage.access_patterns import BRAND_THREATS

__all__ = ["Pipeline", "outbox_actions"]

logger = logging.getLogger("proofgate.pipeline")

_CURSOR_ATTRIBUTES = ("PK", "SK", "GSI1PK", "GSI1SK")


def outbox_actions(
    event: OutboxEvent, settings: PipelineSettings | None = None, *, now: datetime | None = None
) -> list[WriteAction]:
    """The write that hands ``event`` to the pipeline, for the command's own
    transaction; due at once (``now``), whatever time the event claims."""
    when = now or datetime.now(UTC)
    return [outbox_put(event, now=when, settings=settings or PipelineSettings())]


def _transport(
    settings: PipelineSettings,
    broker: Broker,
    tailer: Tailer,
    on_redis_outage: Callable[[], None] | None,
    key: bytes,
) -> AlertTransport:
    if settings.redis_url is None:
        return TableTransport(tailer)
    from services.pipeline.live.redis_transport import RedisTransport

    return RedisTransport(
        settings.redis_url, broker, tailer, settings, key=key, on_outage=on_redis_outage
    )


class Pipeline:
    def __init__(
        self,
        storage: Storage,
        settings: PipelineSettings,
        *,
        cursors: CursorCodec,
        clock: Callable[[], datetime],
        owner: str | None = None,
        transport: AlertTransport | None = None,
        on_redis_outage: Callable[[], None] | None = None,
        on_delivery: Callable[[DeliveryStatus], None] | None = None,
        selections: WebhookSelections | None = None,
        relay_storage: Storage | None = None,
    ) -> None:
        """``transport``: how other processes' alerts arrive; by default Redis
        when ``settings.redis_url`` is set, else the table tail.
        ``on_delivery`` hears each webhook delivery attempt's outcome;
        ``selections`` runs webhooks' GraphQL documents; ``relay_storage``:
        what the relay reads and writes through (default ``storage``)."""
        self.storage = storage
        self.settings = settings
        self.cursors = cursors
        self.broker = Broker(
            queue_max=settings.queue_max,
            limits=settings.subscription_limits,
            overlap=settings.tail_overlap,
        )
        self.tailer = Tailer(storage, self.broker, settings, clock)
        key = cursors.derive_key(MESSAGE_KEY_LABEL)
        self.transport = transport or _transport(
            settings, self.broker, self.tailer, on_redis_outage, key
        )
        self.relay = Relay(
            storage if relay_storage is None else relay_storage,
            self.broker,
            settings,
            clock,
            owner=owner,
            announce=self.transport.announce,
            on_delivery=on_delivery,
            selections=selections,
        )
        self._clock = clock
        self._handover = Handover()
        self._tasks: list[asyncio.Task[None]] = []

    # --- lifecycle -------------------------------------------------------------

    async def start(self) -> None:
        if self._tasks:
            return
        self._tasks = [
            asyncio.create_task(self.relay.run(), name="proofgate-relay"),
            asyncio.create_task(self.transport.run(), name="proofgate-alert-transport"),
        ]
        await asyncio.sleep(0)

    async def stop(self) -> None:
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.transport.close()
        self.broker.close()

    async def backlog(self) -> Backlog:
        return await measure_backlog(self.storage, self.settings, self._clock())

    # --- commands ----------------------------------------------------------------

    def enqueue(self, event: OutboxEvent) -> list[WriteAction]:
        """``outbox_actions`` with this pipeline's shard layout. The relay is
        woken when they commit, by the storage ``committing`` wraps, and handed
        ``event`` itself."""
        put = outbox_put(event, now=self._clock(), settings=self.settings)
        return [self._handover.note(put, event)]

    def committing(self, storage: Storage) -> CommittingStorage:
        """``storage`` for commands: outbox items they commit go straight to
        this process's relay instead of waiting for its next poll."""
        return CommittingStorage(
            storage, self.relay, self._handover, settings=self.settings, clock=self._clock
        )

    # --- subscriptions -------------------------------------------------------------

    async def subscribe(
        self,
        brand_id: str,
        on_overflow: Callable[[], None] | None = None,
        *,
        key: str | None = None,
        cost: int = 0,
        alert_filter: AlertFilter | None = None,
    ) -> Subscriber:
        """Live alerts of ``brand_id`` from now on (those ``alert_filter``
        matches), buffered until read; held by ``key`` and planning ``cost``
        reads per alert, within their quota."""
        subscriber = self.broker.add(
            brand_id, on_overflow, key=key, cost=cost, alert_filter=alert_filter
        )
        cancelling = cancellations()
        try:
            await self.transport.watch(brand_id)
            await self.tailer.watch(brand_id)
            raise_if_cancelled(since=cancelling)
        except BaseException:
            self.unsubscribe(subscriber)
            raise
        return subscriber

    def unsubscribe(self, subscriber: Subscriber) -> None:
        self.broker.remove(subscriber)
        if not self.broker.is_watched(subscriber.brand_id):
            self.transport.unwatch(subscriber.brand_id)

    def cursor(self, item: Item, tenant: str) -> str:
        """The alert's position in AP12, as the edge cursor ``Brand.threats`` returns."""
        partition = BRAND_THREATS.partition_key.format({"brand_id": item["brandId"]})
        return self.cursors.encode(
            BRAND_THREATS.id, partition, {a: item[a] for a in _CURSOR_ATTRIBUTES}, tenant
        )

    async def replay(self, brand_id: str, after: str, tenant: str) -> list[Item]:
        """Stored alerts recorded after the one ``after`` points at, oldest first."""
        partition = BRAND_THREATS.partition_key.format({"brand_id": brand_id})
        last = self.cursors.decode(after, BRAND_THREATS.id, partition, tenant)
        position = last.get("GSI1SK", "")
        try:
            recorded_at: datetime = ALERT_SORT.parse(position)["recorded_at"]
        except ValueError:
            raise InvalidCursor() from None
        items, truncated = await read_alerts_since(
            self.storage, brand_id, recorded_at, limit=self.settings.replay_max
        )
        if truncated:
            raise BadUserInput(
                f"More than {self.settings.replay_max} alerts follow this cursor",
                hint="Read the backlog with Brand.threats, then subscribe from its newest cursor.",
            )
        mark = position.encode()
        return [item for item in items if item["GSI1SK"].encode() > mark]
