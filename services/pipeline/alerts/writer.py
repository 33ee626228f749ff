"""Writing an alert item's alerts: each stored once, with what it causes.

An outbox item of a scan or a status change yields drafts (the threat
rules); each draft is written with a conditional create on its
deterministic key, in one transaction with the counters it moves and the
webhook deliveries (and their order entries) it causes, then published here
and to the other processes. A repeat after a crash finds the alert there:
the create fails, and nothing is counted, delivered or published twice.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from domain.errors import ConditionFailed
from domain.threats import AlertDraft
from domain.webhooks import delivery_id
from services.pipeline.alerts.drafts import alert_drafts
from services.pipeline.alerts.known import KnownAlerts
from services.pipeline.alerts.records import alert_facts, alert_item, alert_puts
from services.pipeline.alerts.stamping import Stamper
from services.pipeline.events import OutboxEvent, WebhookEvent
from services.pipeline.live.broker import Broker
from services.pipeline.live.tailer import PIPELINE_TENANT
from services.pipeline.outbox.items import outbox_put
from services.pipeline.settings import PipelineSettings
from services.pipeline.webhooks.order import pending_put
from services.transact import transact
from services.webhooks.items import delivery_item, webhook_filter
from storage import Item, Put, Storage, Update
from storage.access_patterns import BRAND_WEBHOOKS

__all__ = ["AlertWriter"]


class AlertWriter:
    def __init__(
        self,
        storage: Storage,
        broker: Broker,
        settings: PipelineSettings,
        clock: Callable[[], datetime],
        *,
        announce: Callable[[Item], None] | None,
        expect: Callable[[Item], None],
    ) -> None:
        """``announce`` hands each alert written here to the other processes;
        ``expect`` hands each delivery it causes to this process's relay."""
        self._storage = storage
        self._broker = broker
        self._settings = settings
        self._announce = announce
        self._expect = expect
        self.stamper = Stamper(clock, settings.commit_budget)
        self.known = KnownAlerts(settings.known_alerts_bytes)
        """Alerts known to be stored: their drafts are not written again."""
        self.created = 0

    async def write(self, event: OutboxEvent) -> None:
        """The alerts ``event`` raises, each written once."""
        drafts = await alert_drafts(self._storage, event, self._settings.threats, known=self.known)
        if not drafts:
            return
        webhooks = await self._webhooks(event.brand_id)
        for draft in drafts:
            await self.persist(draft, webhooks)

    async def _webhooks(self, brand_id: str) -> list[Item]:
        page = await self._storage.query(
            BRAND_WEBHOOKS,
            {"brand_id": brand_id},
            tenant=PIPELINE_TENANT,
            first=min(self._settings.webhooks_per_brand, BRAND_WEBHOOKS.max_page),
        )
        return page.items

    async def persist(self, draft: AlertDraft, webhooks: list[Item]) -> bool:
        """False when the alert was already stored (by this process before a
        crash, or by another)."""
        recorded_at = self.stamper.stamp()
        item = alert_item(draft, recorded_at)
        actions: list[Put | Update] = alert_puts(item)
        deliveries = self._deliveries(item, recorded_at, webhooks, actions)
        try:
            await transact(self._storage, actions)
        except ConditionFailed as error:
            if error.index == 0:
                self.known.add(draft.key)
                return False
            raise
        self.known.add(draft.key)
        self.created += 1
        item = await self.stamper.visible(self._storage, item)
        # Announced first: the publisher to other processes then runs before
        # this process's fan-out writes its sockets, which would otherwise
        # hold every other process's subscribers back by their whole loop
        # (docs/design.md, Alert fan-out).
        if self._announce is not None:
            self._announce(item)
        self._broker.publish(item)
        for delivery in deliveries:
            self._expect(delivery)
        return True

    def _deliveries(
        self,
        alert: Item,
        recorded_at: datetime,
        webhooks: list[Item],
        actions: list[Put | Update],
    ) -> list[Item]:
        """Adds to ``actions`` a delivery, its outbox item and its order entry
        for each webhook whose filter the alert matches; the outbox items."""
        facts = alert_facts(alert)
        deliveries: list[Item] = []
        for webhook in webhooks:
            if not webhook_filter(webhook).matches(facts):
                continue
            event = WebhookEvent(
                delivery_id(webhook["id"], alert["id"]),
                webhook["id"],
                alert["brandId"],
                alert["id"],
                recorded_at,
            )
            actions.append(
                delivery_item(
                    delivery_id=event.delivery_id,
                    webhook=webhook,
                    alert=alert,
                    created_at=recorded_at,
                    retention=self._settings.delivery_retention,
                )
            )
            put = outbox_put(event, now=recorded_at, settings=self._settings)
            actions.extend((put, pending_put(event)))
            deliveries.append(put.item)
        return deliveries
