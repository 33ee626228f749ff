"""Appending to a product's chain: the one write path for provenance events.

An append is one transaction that creates ``EVENT#<n>`` (only if absent) and
moves the product's head from ``n-1`` to ``n`` (only if it is still at
``n-1``), so concurrent appends can never fork the chain: one wins, the
others re-read the head and try again, a bounded number of times, then
answer CONFLICT. An event earlier than the head is BAD_USER_INPUT.

Appends that change the status (transfer, recall) are also conditional on the
status they read. A loser that finds the status changed by a concurrent
request to the status it wanted answers CONFLICT rather than repeating the
change, so concurrent calls yield one event and one alert.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from domain.chain import ChainHead, ProvenanceEvent, check_not_future, next_event
from domain.datetimes import format_datetime
from domain.enums import ProductStatus
from domain.errors import ConditionFailed, Conflict, NotFound
from domain.status import transition
from storage import All, Compare, Comparison, Item, ItemAbsent, Put, Update, WriteAction
from storage.access_patterns import PRODUCT_BY_ID
from storage.conditions import Condition
from storage.store import backoff_delay

from ..analytics.counters import status_change
from ..audit.items import audit_entry
from ..context import CommandContext
from ..pipeline.events import AppendEvent, OutboxEvent
from ..transact import transact
from .drafts import EventDraft
from .items import chain_head, event_item, head_update

__all__ = [
    "APPEND_MAX_ATTEMPTS",
    "EXTRA_ACTIONS_START",
    "Appended",
    "ExtraActions",
    "ExtraEvents",
    "append_event",
]

APPEND_MAX_ATTEMPTS = 10
_EVENT, _PRODUCT = 0, 1

ExtraEvents = Callable[[Item, ProvenanceEvent], Sequence[OutboxEvent]]
"""Events an append raises besides its own ``AppendEvent`` (a recall's RecallEvent)."""
ExtraActions = Callable[[Item, ProvenanceEvent, datetime], Sequence[WriteAction]]
"""Writes that commit with the append or not at all (partner ingest's record
of the partner's event id); given the product, the event and the time."""
EXTRA_ACTIONS_START = 2


@dataclass(frozen=True)
class Appended:
    event: ProvenanceEvent
    product: Item
    """The product as the append left it."""


def _status_marker(product: Item) -> tuple[str, int]:
    """Which status change the product is at: the status and the sequence of
    the event that set it (0 for the status it was registered with)."""
    return product["status"], int(product.get("statusSequence", 0))


async def _reload(context: CommandContext, product_id: str) -> Item:
    context.loaders.forget(PRODUCT_BY_ID, product_id=product_id)
    item = await context.loaders.item(PRODUCT_BY_ID, product_id=product_id)
    if item is None:
        raise NotFound("Product not found")
    return item


async def append_event(
    context: CommandContext,
    product: Item,
    draft: EventDraft,
    *,
    operation: str,
    target_status: ProductStatus | None = None,
    extra_events: ExtraEvents | None = None,
    extra_actions: ExtraActions | None = None,
    private: Mapping[str, Any] | None = None,
) -> Appended:
    """``extra_actions`` join the append's transaction from index
    ``EXTRA_ACTIONS_START``; a condition of theirs that fails is raised as is,
    for the caller to read, and never retried here. ``private``: attributes
    stored on the event item outside what the chain hashes (a transfer's
    recipient)."""
    product_id: str = product["id"]
    read_marker = _status_marker(product)
    for attempt in range(APPEND_MAX_ATTEMPTS):
        if attempt:
            await asyncio.sleep(backoff_delay(attempt))
            product = await _reload(context, product_id)
            if (
                target_status is not None
                and _status_marker(product) != read_marker
                and product["status"] == target_status.value
            ):
                raise Conflict(
                    f"The product was {target_status.value.lower()} by a concurrent request",
                    hint="Read the product again before changing it.",
                )
        try:
            return await _attempt(
                context,
                product,
                draft,
                _Extras(operation, target_status, extra_events, extra_actions, private),
            )
        except ConditionFailed as error:
            if error.index not in (_EVENT, _PRODUCT):
                raise
    raise Conflict(
        "The provenance chain kept moving under concurrent appends",
        hint="Retry the request; nothing was appended.",
    )


@dataclass(frozen=True)
class _Extras:
    operation: str
    target_status: ProductStatus | None
    extra_events: ExtraEvents | None
    extra_actions: ExtraActions | None
    private: Mapping[str, Any] | None = None


def _next_event(head: ChainHead, draft: EventDraft, now: datetime) -> ProvenanceEvent:
    # A default time never precedes the head, even when another gateway's clock runs ahead;
    # a given one is bounded, a default never refused (a future head stays appendable).
    if draft.occurred_at is not None:
        check_not_future(draft.occurred_at, now)
    occurred_at = draft.occurred_at or max(now, head.occurred_at or now)
    return next_event(
        head,
        type=draft.type,
        occurred_at=occurred_at,
        actor=draft.actor,
        location=draft.location,
        latitude=draft.latitude,
        longitude=draft.longitude,
        data=draft.data,
        source=draft.source,
    )


async def _attempt(
    context: CommandContext, product: Item, draft: EventDraft, extras: _Extras
) -> Appended:
    target_status = extras.target_status
    current = ProductStatus(product["status"])
    if target_status is not None:
        transition(current, target_status)
    now = context.now()
    head = chain_head(product)
    event = _next_event(head, draft, now)
    changes: dict[str, Any] = {**head_update(event), "updatedAt": format_datetime(now)}
    condition: Condition = Compare("chainSequence", Comparison.EQ, head.sequence)
    if target_status is not None:
        changes |= {"status": target_status.value, "statusSequence": event.sequence}
        condition = All(condition, Compare("status", Comparison.EQ, current.value))
    brand_id: str = product["brandId"]
    product_id: str = product["id"]
    raised: list[OutboxEvent] = [
        AppendEvent(product_id, brand_id, event.sequence, event.occurred_at, head.occurred_at),
        *(extras.extra_events(product, event) if extras.extra_events else ()),
    ]
    await transact(
        context.storage,
        [
            Put(
                event_item(
                    event,
                    product_id=product_id,
                    brand_id=brand_id,
                    recorded_at=now,
                    private=extras.private,
                ),
                ItemAbsent(),
            ),
            Update(PRODUCT_BY_ID.key(product_id=product_id), set=changes, condition=condition),
            *(extras.extra_actions(product, event, now) if extras.extra_actions else ()),
            audit_entry(
                context.principal, extras.operation, now, brand_id=brand_id, target_ids=[product_id]
            ),
            *([status_change(brand_id, current, target_status)] if target_status else []),
            *(
                action
                for raised_event in raised
                for action in context.services.enqueue(raised_event)
            ),
        ],
    )
    updated = {**product, **changes}
    context.loaders.prime(PRODUCT_BY_ID, updated, product_id=product_id)
    return Appended(event, updated)
