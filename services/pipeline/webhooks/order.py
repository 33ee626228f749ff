"""One webhook's deliveries in alert order (docs/design.md, Webhook order).

Each unsettled delivery has an entry under ``WEBHOOKQ#<webhook id>`` /
``AT#<recordedAt>#<delivery id>`` (AP36), written in the transaction that
writes the alert and the delivery's outbox item, and deleted in the one that
settles the item (delivered, or parked). A claimed delivery is sent only when
no entry sorts before its own; otherwise it is given back, unleased and its
attempt returned, to wait, in a transaction that also checks the earlier
entry still exists and its item still waits, so a head settling meanwhile is
seen (the delivery looks again) rather than waited for. Whoever settles a
head makes the next entry's item due at once: the backlog drains one
delivery after another, oldest first, with no poll of everything waiting.
A waiting item is due again after ``retry_cap`` anyway, in case the process
that settled its head died before waking it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from domain.datetimes import format_datetime
from domain.errors import ConditionFailed
from services.pipeline.events import WebhookEvent
from services.pipeline.live.tailer import PIPELINE_TENANT
from services.pipeline.outbox.items import (
    ClaimedItem,
    OutboxStatus,
    due_sort,
    outbox_key,
    release_update,
)
from services.pipeline.settings import PipelineSettings
from storage import (
    Any_,
    Compare,
    Comparison,
    ConditionCheck,
    Delete,
    Item,
    ItemAbsent,
    ItemExists,
    Key,
    KeyTemplate,
    Put,
    Storage,
    Update,
)
from storage.access_patterns import WEBHOOK_PENDING

__all__ = ["WebhookOrder", "pending_delete", "pending_put"]

logger = logging.getLogger("proofgate.pipeline")

PENDING_SORT = KeyTemplate("AT#{created_at:time}#{delivery_id}")
_LOOKS = 3
"""Times a delivery looks for an earlier one in one claim: each further look
follows a head that settled while it looked."""
_JUST = timedelta(microseconds=1)
_WAITING = Any_(
    Compare("status", Comparison.EQ, OutboxStatus.READY.value),
    Compare("status", Comparison.EQ, OutboxStatus.LEASED.value),
)


def pending_key(event: WebhookEvent) -> Key:
    return Key(
        WEBHOOK_PENDING.partition({"webhook": event.webhook_id}),
        PENDING_SORT.format({"created_at": event.created_at, "delivery_id": event.delivery_id}),
    )


def pending_put(event: WebhookEvent) -> Put:
    key = pending_key(event)
    item: Item = {
        "PK": key.pk,
        "SK": key.sk,
        "entity": "PendingDelivery",
        "deliveryId": event.delivery_id,
        "eventId": event.event_id,
    }
    return Put(item, ItemAbsent())


def pending_delete(event: WebhookEvent) -> Delete:
    """Unconditional: an item enqueued before entries existed has none."""
    return Delete(pending_key(event))


class WebhookOrder:
    def __init__(
        self,
        storage: Storage,
        settings: PipelineSettings,
        clock: Callable[[], datetime],
        woke: Callable[[], None],
    ) -> None:
        """``woke``: an item was made due now (the relay polls)."""
        self._storage = storage
        self._settings = settings
        self._clock = clock
        self._woke = woke

    async def ahead(self, event: WebhookEvent) -> Item | None:
        """The oldest unsettled delivery of the webhook, if it sorts before
        ``event``'s own."""
        page = await self._storage.query(
            WEBHOOK_PENDING, {"webhook": event.webhook_id}, tenant=PIPELINE_TENANT, first=1
        )
        if not page.items:
            return None
        head = page.items[0]
        return head if head["SK"] < pending_key(event).sk else None

    async def waits(self, claimed: ClaimedItem, event: WebhookEvent) -> bool:
        """True when the delivery must wait for an earlier one, and was given
        back (or lost its lease: someone else has it); False when it may go."""
        for _ in range(_LOOKS):
            head = await self.ahead(event)
            if head is None:
                return False
            due = self._clock() + self._settings.retry_cap
            try:
                await self._storage.transact_write(
                    [
                        release_update(claimed.event_id, claimed.lease.token, due=due),
                        ConditionCheck(Key(head["PK"], head["SK"]), ItemExists()),
                        ConditionCheck(outbox_key(head["eventId"]), _WAITING),
                    ]
                )
            except ConditionFailed as failed:
                if failed.index == 0:
                    return True
                if failed.index == 2:
                    await self._drop_stale(head)
                continue
            return True
        logger.warning(
            "Webhook delivery %s found its head settling %d times; its lease will expire",
            event.delivery_id,
            _LOOKS,
        )
        return True

    async def _drop_stale(self, head: Item) -> None:
        """An entry whose item is gone or parked without it (a payload that
        did not parse) would hold its webhook forever."""
        logger.warning("Dropping the order entry of settled delivery %s", head["deliveryId"])
        await self._storage.transact_write([Delete(Key(head["PK"], head["SK"]))])

    async def settled(self, event: WebhookEvent) -> None:
        """``event``'s entry is gone: the next delivery of its webhook is due now."""
        try:
            page = await self._storage.query(
                WEBHOOK_PENDING, {"webhook": event.webhook_id}, tenant=PIPELINE_TENANT, first=1
            )
            if not page.items:
                return
            head = page.items[0]
            # Just before now: a poll reads what is due before its clock.
            now = self._clock() - _JUST
            await self._storage.transact_write(
                [
                    Update(
                        outbox_key(head["eventId"]),
                        set={
                            "GSI2SK": due_sort(now, head["eventId"]),
                            "dueAt": format_datetime(now),
                        },
                        condition=Compare("status", Comparison.EQ, OutboxStatus.READY.value),
                    )
                ]
            )
        except ConditionFailed:
            return  # claimed meanwhile: its claimer finds it first in line
        except Exception:
            logger.warning(
                "Waking the delivery after %s failed; it is due within %s",
                event.delivery_id,
                self._settings.retry_cap,
                exc_info=True,
            )
            return
        self._woke()
