"""The relay: runs in every gateway process and turns outbox items into alerts.

It claims due items (AP19) with a conditional lease, runs the threat rules,
writes each alert with a conditional create on its deterministic key in one
transaction with the counters it moves and the webhook deliveries it causes,
publishes what it created, and deletes the item. Every step can be repeated
after a crash: a second run finds the alerts already there and creates,
counts and publishes nothing twice.

Alert items go through one lane, one at a time, so this process stamps
``recordedAt`` in the order its alerts commit; webhook deliveries run beside it,
a few at a time, so a slow receiver never delays an alert. The relay claims
only what it has room to work (``intake``), so no lease runs out while its
item waits (docs/design.md, "Relay backpressure").
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
import random
import secrets
import socket
import time
from collections.abc import Callable, Coroutine
from datetime import datetime, timedelta
from typing import Any

from domain.errors import ConditionFailed, ProofgateError
from domain.threats import AlertDraft
from domain.webhooks import delivery_id
from services.pipeline.alerts.drafts import alert_drafts
from services.pipeline.alerts.known import KnownAlerts
from services.pipeline.alerts.records import alert_facts, alert_item, alert_puts
from services.pipeline.alerts.stamping import Stamper
from services.pipeline.events import OutboxEvent, WebhookEvent
from services.pipeline.live.broker import Broker
from services.pipeline.live.tailer import PIPELINE_TENANT
from services.pipeline.outbox.claims import claim_all
from services.pipeline.outbox.completions import Completions
from services.pipeline.outbox.intake import HINTS_PER_BATCH, Intake, is_webhook
from services.pipeline.outbox.items import (
    ClaimedItem,
    Lease,
    complete_delete,
    outbox_put,
    park_update,
    release_update,
    retry_update,
)
from services.pipeline.periodic import repeat
from services.pipeline.settings import PipelineSettings
from services.pipeline.webhooks.delivery import deliver
from services.pipeline.webhooks.order import WebhookOrder, pending_delete, pending_put
from services.transact import transact
from services.webhooks.items import DeliveryStatus, delivery_item, webhook_filter
from services.webhooks.selections import WebhookSelections
from storage import Item, Put, Storage, Update, WriteAction
from storage.access_patterns import BRAND_WEBHOOKS, OUTBOX_DUE

__all__ = ["Relay", "retry_delay"]

logger = logging.getLogger("proofgate.pipeline")

RELEASE_SECONDS = 5.0


def retry_delay(attempt: int, settings: PipelineSettings) -> timedelta:
    """Exponential from ``retry_base``, capped, with a little jitter so items
    that failed together do not retry together."""
    delay = min(settings.retry_cap, settings.retry_base * (1 << min(max(0, attempt - 1), 32)))
    return delay * random.uniform(1.0, 1.1)


def _uncounted(status: DeliveryStatus) -> None:
    return None


def _owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


class Relay:
    def __init__(
        self,
        storage: Storage,
        broker: Broker,
        settings: PipelineSettings,
        clock: Callable[[], datetime],
        *,
        owner: str | None = None,
        announce: Callable[[Item], None] | None = None,
        on_delivery: Callable[[DeliveryStatus], None] | None = None,
        selections: WebhookSelections | None = None,
    ) -> None:
        """``announce``: hands each alert created here to the other processes;
        ``selections`` runs the GraphQL documents of webhooks that have one."""
        self._storage = storage
        self._selections = selections
        self._on_delivery = on_delivery or _uncounted
        self._broker = broker
        self._announce = announce
        self._settings = settings
        self._clock = clock
        self.owner = owner or _owner()
        self._lane: asyncio.Queue[ClaimedItem] = asyncio.Queue()
        """Claimed alert items: the intake's room (at most ``claim_batch``),
        and a few more when commits of born items race for its last place."""
        self._intake = Intake(settings)
        self._webhook_slots = asyncio.Semaphore(settings.webhook_concurrency)
        self._settling = asyncio.Semaphore(HINTS_PER_BATCH * settings.claim_batch)
        """Worked alert items whose delete (or retry) has not committed yet."""
        self._completions = Completions(storage, self._completed)
        self._order = WebhookOrder(storage, settings, clock, self.wake)
        self._wake = asyncio.Event()
        """Polls the table now."""
        self._hinted = asyncio.Event()
        """Claims hints now: one arrived, or room was freed."""
        self._tasks: set[asyncio.Task[None]] = set()
        self._held: dict[str, str] = {}
        """Event ids by lease token, from the claim until the item is settled:
        released when the relay stops."""
        self._running = False
        self.stamper = Stamper(clock, settings.commit_budget)
        self.known_alerts = KnownAlerts(settings.known_alerts_bytes)
        """Alerts known to be stored: their drafts are not written again."""
        self.alerts_created = 0
        self.lapsed = 0
        """Claimed items whose lease ended before the lane reached them: left
        to whoever claims them next. Stays 0 unless an item takes longer than
        ``lease / claim_batch``."""

    def pressure(self) -> dict[str, int]:
        """What backpressure and late commits did since start (a metric)."""
        return {
            "deferred": self.deferred,
            "lapsed": self.lapsed,
            "late": self.stamper.late,
            "stranded": self.stamper.stranded,
        }

    @property
    def deferred(self) -> int:
        """Committed items left to the poll because the relay was full."""
        return self._intake.deferred

    # --- running -------------------------------------------------------------

    async def run(self) -> None:
        self._running = True
        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(self._poll_loop())
                group.create_task(self._hint_loop())
                group.create_task(self._alert_lane())
                group.create_task(self._completions.run())
        finally:
            self._running = False
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            await self._release_held()

    def wake(self) -> None:
        """Polls the table at once."""
        self._wake.set()

    def reserve(self) -> Lease | None:
        """A lease for an outbox item a command of this process is about to
        commit, when the alert lane has room for it: written with it
        (``born_put``), the item goes to the lane when it commits (``born``),
        with no claim's write and no hint. None otherwise: the item is
        written ready and hinted (docs/design.md, Pipeline)."""
        intake = self._intake
        if not self._running or not intake.has_room(webhook=False):
            return None
        return Lease(self.owner, secrets.token_hex(8), self._clock() + self._settings.lease)

    def born(self, item: Item, lease: Lease, event: OutboxEvent | None = None) -> None:
        """The item written with ``reserve``'s lease has committed: held here
        and queued in the lane. Commits that raced for the last room may take
        a little more than the room; the lane's lease check still holds.
        ``event``: the one the item was built from, if the caller has it."""
        try:
            claimed = ClaimedItem.born(item, lease, event)
        except ProofgateError:
            # Never raised to the command, whose write has committed: the
            # item's next claimer, once the lease ends, parks it.
            logger.exception("Outbox item %s does not parse", item["id"])
            return
        self._intake.take(False)
        self._held[lease.token] = item["id"]
        self._lane.put_nowait(claimed)

    def expect(self, item: Item) -> None:
        """An item this process just committed: claimed as soon as there is
        room, without waiting for a poll (or left to the poll, if the hints
        are full)."""
        if self._running:
            self._intake.offer(item)
            self._hinted.set()

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        # A fresh context: work spawned from inside a request must not land in
        # that request's storage trace (or any other context it carries).
        task = asyncio.create_task(coroutine, context=contextvars.Context())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _poll_loop(self) -> None:
        await repeat(
            self.poll_once,
            self._settings.poll_interval,
            failure="Polling the outbox failed; retrying",
            wake=self._wake,
            idle_interval=self._settings.idle_poll_interval,
        )

    async def _hint_loop(self) -> None:
        """Beside the poll, so a slow poll never delays a committed item."""
        while True:
            await self._hinted.wait()
            self._hinted.clear()
            await self._claim_hints()

    def _freed(self, webhook: bool) -> None:
        self._intake.done(webhook)
        if self._intake.waiting:
            # Only a waiting hint can use the room; a new one wakes the loop itself.
            self._hinted.set()
        if self._intake.overflowed and self._intake.half_free(webhook):
            # Not at every freed place: a poll per item worked read four
            # shards and claimed one item (docs/design.md, Relay backpressure).
            self._wake.set()

    async def _alert_lane(self) -> None:
        while True:
            claimed = await self._lane.get()
            if self._clock() >= claimed.lease.until:
                self.lapsed += 1
                logger.warning(
                    "Outbox item %s waited past its lease; left to its next claimer",
                    claimed.event_id,
                )
                self._held.pop(claimed.lease.token, None)
                self._freed(webhook=False)
                continue
            started = time.monotonic()
            error = await self._outcome(claimed)
            self._intake.worked(time.monotonic() - started)
            # Settling (a delete, or the retry's update) waits for a commit;
            # the lane goes on meanwhile, or it works no faster than the
            # writer commits one item at a time. Its room is free now: no
            # lease is left to run out unworked (docs/design.md, Verify path).
            # Deletes that wait together commit together.
            await self._settling.acquire()
            self._freed(webhook=False)
            if error is None:
                self._completions.add(claimed)
            else:
                self._spawn(self._finish(claimed, error))

    def _completed(self, claimed: ClaimedItem) -> None:
        self._held.pop(claimed.lease.token, None)
        self._settling.release()

    async def _finish(self, claimed: ClaimedItem, error: Exception) -> None:
        try:
            await self._settle_outcome(claimed, error)
            self._held.pop(claimed.lease.token, None)
        finally:
            self._settling.release()

    async def _release_held(self) -> None:
        """A stopping process gives its unsettled items back at once instead of
        leaving them leased until the lease expires (docs/design.md, "Pipeline")."""
        held, self._held = list(self._held.items()), {}
        if not held:
            return
        now = self._clock()
        try:
            async with asyncio.timeout(RELEASE_SECONDS):
                for token, event_id in held:
                    # A claim cancelled mid-write may not have applied: then
                    # the token's condition fails and nothing changes.
                    await self._write(release_update(event_id, token, due=now))
        except Exception:
            logger.warning(
                "Releasing %d outbox leases failed; they will expire", len(held), exc_info=True
            )

    async def _claim_hints(self) -> None:
        batch: dict[str, Item] = {}
        while (item := self._intake.pop_ready()) is not None:
            if item["id"] in batch or self._holds(item["id"]):
                # A poll claimed it first (or it was hinted twice); this
                # claim could only lose.
                self._intake.done(is_webhook(item))
                continue
            batch[item["id"]] = item
        if batch:
            # Beside the batches before it, not after them: each waits for a
            # commit, and claimed in turn they fell behind a busy process's
            # commits. One task and one transaction a batch, not an item.
            self._spawn(self._claim_hints_batch(list(batch.values())))

    async def _claim_hints_batch(self, items: list[Item]) -> None:
        try:
            await self._claim_reserved(items)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.warning(
                "Claiming %d outbox items failed; a poll will find them", len(items), exc_info=True
            )

    async def _claim_reserved(self, items: list[Item]) -> int:
        """Claims ``items`` in room already taken for each; gives back the
        room of each claim that loses or fails; how many it claimed."""
        try:
            claimed = await self._claim(items)
        except BaseException:
            for item in items:
                self._intake.done(is_webhook(item))
            raise
        count = 0
        for item, claim in zip(items, claimed, strict=True):
            if claim is None:
                self._intake.done(is_webhook(item))
            else:
                self._dispatch(claim)
                count += 1
        return count

    # --- claiming ------------------------------------------------------------

    async def poll_once(self) -> int:
        """Claims what is due, as far as there is room; how many items it
        claimed. Reads no more than there is room for, and claims nothing
        while full, so no lease expires unworked."""
        self._intake.overflowed = False
        now = self._clock()
        batch: list[Item] = []
        for shard in self._settings.shards:
            room = self._intake.free
            if room == 0:
                break
            try:
                page = await self._storage.query(
                    OUTBOX_DUE,
                    {"shard": shard, "before": now},
                    tenant=PIPELINE_TENANT,
                    first=min(self._settings.claim_batch, room),
                )
            except BaseException:
                for item in batch:  # their room, taken for a claim never made
                    self._intake.done(is_webhook(item))
                raise
            if len(page.items) >= min(self._settings.claim_batch, room):
                # More may be due than there was room for.
                self._intake.overflowed = True
            for item in page.items:
                if not self._intake.fits(item) or self._holds(item["id"]):
                    continue
                self._intake.withdraw(item["id"])
                self._intake.take(is_webhook(item))
                batch.append(item)
        # One transaction for what every shard gave (docs/design.md, Relay backpressure).
        return await self._claim_reserved(batch) if batch else 0

    def _holds(self, event_id: str) -> bool:
        """Claimed here, or being claimed, and not yet settled: another claim
        of it from this relay would be a write that can only lose
        (docs/design.md, Verify path)."""
        return event_id in self._held.values()

    async def _claim(self, items: list[Item]) -> list[ClaimedItem | None]:
        """Each item claimed, in one transaction; None for one that lost, or
        was parked: out of attempts, or unreadable."""
        now = self._clock()
        claims: list[tuple[Item, Lease]] = []
        for item in items:
            if int(item.get("attempts", 0)) >= self._settings.max_attempts and not is_webhook(item):
                # Its last attempt never finished (the process died holding the lease).
                await self._write(
                    park_update(
                        item["id"],
                        now=now,
                        error="lease expired on the last attempt",
                        sort=item["GSI2SK"],
                    )
                )
            else:
                claims.append(
                    (item, Lease(self.owner, secrets.token_hex(8), now + self._settings.lease))
                )
        for item, lease in claims:
            self._held[lease.token] = item["id"]
        try:
            won = await claim_all(self._storage, claims)
        except asyncio.CancelledError:
            raise
        except BaseException:
            for _, lease in claims:
                self._held.pop(lease.token, None)
            raise
        claimed: dict[str, ClaimedItem] = {}
        for (item, lease), ok in zip(claims, won, strict=True):
            if not ok:
                self._held.pop(lease.token, None)
            elif (made := await self._parsed(item, lease, now)) is not None:
                claimed[item["id"]] = made
        return [claimed.get(item["id"]) for item in items]

    async def _parsed(self, item: Item, lease: Lease, now: datetime) -> ClaimedItem | None:
        """The item this relay won, or None when it does not parse: parked."""
        try:
            return ClaimedItem.from_item(item, lease)
        except ProofgateError as error:
            self._held.pop(lease.token, None)
            message = error.message
        try:
            await self._write(park_update(item["id"], now=now, error=message, token=lease.token))
        except asyncio.CancelledError:
            raise
        except Exception:
            # Not raised: the rest of its batch was claimed and goes to work.
            logger.warning(
                "Parking outbox item %s failed; its next claimer parks it",
                item["id"],
                exc_info=True,
            )
        return None

    def _dispatch(self, claimed: ClaimedItem) -> None:
        if isinstance(claimed.event, WebhookEvent):
            self._spawn(self._deliver(claimed))
        else:
            self._lane.put_nowait(claimed)

    async def _deliver(self, claimed: ClaimedItem) -> None:
        try:
            async with self._webhook_slots:
                await self.handle(claimed)
            self._held.pop(claimed.lease.token, None)
        finally:
            self._freed(webhook=True)

    async def _write(self, action: WriteAction) -> bool:
        """False when the condition failed: another relay owns the item now."""
        try:
            await self._storage.transact_write([action])
        except ConditionFailed:
            return False
        return True

    # --- processing ----------------------------------------------------------

    async def handle(self, claimed: ClaimedItem) -> None:
        """Never raises but on cancellation: whatever fails here, the lease
        expires and another attempt follows. A webhook delivery with an
        earlier one of its webhook pending is given back to wait instead
        (docs/design.md, Webhook order)."""
        event = claimed.event
        if isinstance(event, WebhookEvent) and await self._waits(claimed, event):
            return
        await self._settle_outcome(claimed, await self._outcome(claimed))

    async def _waits(self, claimed: ClaimedItem, event: WebhookEvent) -> bool:
        try:
            return await self._order.waits(claimed, event)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.warning(
                "Reading the order of webhook delivery %s failed; its lease will expire",
                event.delivery_id,
                exc_info=True,
            )
            return True

    async def _outcome(self, claimed: ClaimedItem) -> Exception | None:
        """Works the item; what made it fail, if anything did."""
        try:
            await self._process(claimed)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            if isinstance(error, ProofgateError):
                logger.warning("Outbox item %s failed: %s", claimed.event_id, error.message)
            else:
                logger.exception("Outbox item %s failed", claimed.event_id)
            return error
        return None

    async def _settle_outcome(self, claimed: ClaimedItem, error: Exception | None) -> None:
        """Deletes a worked item, or records its failure; never raises but on
        cancellation."""
        try:
            if error is None:
                await self._complete(claimed)
            else:
                await self._fail(claimed, error)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception(
                "Recording the outcome of outbox item %s failed; its lease will expire",
                claimed.event_id,
            )

    async def _settle(self, claimed: ClaimedItem, action: WriteAction) -> bool:
        """Writes ``action``, which ends the item (a delete, a park); a
        webhook delivery's order entry goes with it, and the next delivery
        of its webhook is woken (docs/design.md, Webhook order)."""
        event = claimed.event
        if not isinstance(event, WebhookEvent):
            return await self._write(action)
        try:
            await self._storage.transact_write([action, pending_delete(event)])
        except ConditionFailed:
            return False
        await self._order.settled(event)
        return True

    def _gives_up(self, claimed: ClaimedItem) -> bool:
        """This attempt is the last: an alert item's ``max_attempts``-th, a
        delivery's first claimed once it is ``webhook_retry_horizon`` old
        (by its claim's time, so the delivery's record and the item agree
        however long the attempt took)."""
        event = claimed.event
        if isinstance(event, WebhookEvent):
            claimed_at = claimed.lease.until - self._settings.lease
            return claimed_at >= event.created_at + self._settings.webhook_retry_horizon
        return claimed.attempts >= self._settings.max_attempts

    def _retry_due(self, claimed: ClaimedItem, now: datetime) -> datetime:
        due = now + retry_delay(claimed.attempts, self._settings)
        event = claimed.event
        if isinstance(event, WebhookEvent):
            # The last attempt falls on the horizon, not up to retry_cap past it.
            due = max(now, min(due, event.created_at + self._settings.webhook_retry_horizon))
        return due

    async def _complete(self, claimed: ClaimedItem) -> None:
        if not await self._settle(claimed, complete_delete(claimed.event_id, claimed.lease.token)):
            logger.info("Outbox item %s was taken over before it completed", claimed.event_id)

    async def _process(self, claimed: ClaimedItem) -> None:
        event = claimed.event
        if isinstance(event, WebhookEvent):
            now = self._clock()
            await deliver(
                self._storage,
                event,
                now=now,
                settings=self._settings,
                final=self._gives_up(claimed),
                counted=self._on_delivery,
                selections=self._selections,
            )
            return
        drafts = await alert_drafts(
            self._storage, event, self._settings.threats, known=self.known_alerts
        )
        if not drafts:
            return
        webhooks = await self._webhooks(event.brand_id)
        for draft in drafts:
            await self._persist(draft, webhooks)

    async def _webhooks(self, brand_id: str) -> list[Item]:
        page = await self._storage.query(
            BRAND_WEBHOOKS,
            {"brand_id": brand_id},
            tenant=PIPELINE_TENANT,
            first=min(self._settings.webhooks_per_brand, BRAND_WEBHOOKS.max_page),
        )
        return page.items

    async def _persist(self, draft: AlertDraft, webhooks: list[Item]) -> bool:
        recorded_at = self.stamper.stamp()
        item = alert_item(draft, recorded_at)
        actions: list[Put | Update] = alert_puts(item)
        deliveries: list[Item] = []
        facts = alert_facts(item)
        for webhook in webhooks:
            if not webhook_filter(webhook).matches(facts):
                continue
            event = WebhookEvent(
                delivery_id(webhook["id"], item["id"]),
                webhook["id"],
                draft.brand_id,
                item["id"],
                recorded_at,
            )
            actions.append(
                delivery_item(
                    delivery_id=event.delivery_id,
                    webhook=webhook,
                    alert=item,
                    created_at=recorded_at,
                    retention=self._settings.delivery_retention,
                )
            )
            put = outbox_put(event, now=recorded_at, settings=self._settings)
            actions.append(put)
            actions.append(pending_put(event))
            deliveries.append(put.item)
        try:
            await transact(self._storage, actions)
        except ConditionFailed as error:
            if error.index == 0:
                self.known_alerts.add(draft.key)
                return False
            raise
        self.known_alerts.add(draft.key)
        self.alerts_created += 1
        item = await self.stamper.visible(self._storage, item)
        self._broker.publish(item)
        if self._announce is not None:
            self._announce(item)
        for delivery in deliveries:
            self.expect(delivery)
        return True

    async def _fail(self, claimed: ClaimedItem, error: BaseException) -> None:
        now = self._clock()
        text = (
            error.message
            if isinstance(error, ProofgateError)
            else f"{type(error).__name__}: {error}"
        )
        if self._gives_up(claimed):
            logger.error(
                "Outbox item %s parked after %d attempts: %s",
                claimed.event_id,
                claimed.attempts,
                text,
            )
            park = park_update(claimed.event_id, now=now, error=text, token=claimed.lease.token)
            written = await self._settle(claimed, park)
        else:
            due = self._retry_due(claimed, now)
            retry = retry_update(claimed.event_id, claimed.lease.token, due=due, error=text)
            written = await self._write(retry)
        if not written:
            logger.info(
                "Outbox item %s was taken over before its failure was recorded", claimed.event_id
            )
