"""How outbox items are stored and moved between states.

``OUTBOX#<event id>`` / ``OUTBOX`` holds the event. While it waits it sits on
GSI2 under ``OUTBOX#READY#<shard>`` / ``DUE#<due>#<event id>`` (AP19), so a
relay finds due work with one Query per shard and no scan.

A claim is a conditional update that moves the due time to the end of the
lease: the item stays in the ready queue but is invisible until the lease
expires, when any relay can take it over. The condition (GSI2SK unchanged)
makes exactly one of several concurrent claimers win. Completion deletes the
item, failure puts it back with a later due time, and an item that has used
its attempts is parked under ``OUTBOX#PARKED`` (AP22), where an operator sees it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from domain.datetimes import format_datetime
from services.pipeline.events import OutboxEvent, event_from_payload
from services.pipeline.settings import PipelineSettings
from storage import (
    Compare,
    Comparison,
    Delete,
    Item,
    ItemAbsent,
    Key,
    KeyTemplate,
    Put,
    Update,
)
from storage.access_patterns import OUTBOX_DUE, OUTBOX_PARKED

__all__ = [
    "ERROR_MAX_CHARS",
    "ClaimedItem",
    "Lease",
    "OutboxStatus",
    "born_put",
    "claim_update",
    "complete_delete",
    "describe",
    "due_sort",
    "outbox_key",
    "outbox_put",
    "park_update",
    "requeue_update",
    "retry_update",
    "shard_of",
]

OUTBOX_PK = KeyTemplate("OUTBOX#{event_id}")
OUTBOX_SK = "OUTBOX"
DUE_SORT = KeyTemplate("DUE#{due:time}#{event_id}")
_DUE_AT = DUE_SORT.span("due")
"""A due time as its sort key spells it, which is ``format_datetime``'s
spelling: the time is spelled once for the key and the attribute beside it."""
_SPELLED_DUE = KeyTemplate("DUE#{due}#{event_id}")
"""``DUE_SORT`` given the time as ``format_datetime`` spells it, which is the
key's spelling and plain text: an item born claimed spells its ``now`` once,
for ``createdAt`` and ``dueAt``, and no ready key it would throw away."""
PARKED_SORT = KeyTemplate("PARKED#{parked_at:time}#{event_id}")
ERROR_MAX_CHARS = 500
_LEASE_ATTRIBUTES = ("leaseOwner", "leaseToken", "leaseUntil")


class OutboxStatus(StrEnum):
    READY = "READY"
    LEASED = "LEASED"
    PARKED = "PARKED"


def shard_of(event_id: str, count: int) -> int:
    """Stable across processes and restarts, unlike ``hash()``."""
    digest = hashlib.sha256(event_id.encode()).digest()
    return int.from_bytes(digest[:8], "big") % count


def outbox_key(event_id: str) -> Key:
    return Key(OUTBOX_PK.format({"event_id": event_id}), OUTBOX_SK)


def due_sort(due: datetime, event_id: str) -> str:
    return DUE_SORT.format({"due": due, "event_id": event_id})


def outbox_put(
    event: OutboxEvent,
    *,
    now: datetime,
    settings: PipelineSettings,
    due: datetime | None = None,
    lease: Lease | None = None,
) -> Put:
    """The item a command writes in its own transaction. Conditional, so an
    event is enqueued once however often its command is retried. With
    ``lease``: born claimed under it, the item ``born_put`` makes of the
    ready one, built once (``CommittingStorage.enqueue``)."""
    layout = settings.current_layout
    event_id = event.event_id
    shard = shard_of(event_id, layout.count)
    # The payload first: its times were usually just spelled or read by the
    # command (a scan's moment, its product's createdAt), which
    # ``format_datetime`` remembers two at a time.
    payload = event.payload()
    created_at = format_datetime(now)
    due_at = created_at if due is None else format_datetime(due)
    item: Item = {
        "PK": OUTBOX_PK.format({"event_id": event_id}),
        "SK": OUTBOX_SK,
        "GSI2PK": OUTBOX_DUE.partition_key.format({"shard": shard}),
        "GSI2SK": "",
        "entity": "OutboxItem",
        "id": event_id,
        "kind": event.kind.value,
        "payload": payload,
        "shard": shard,
        "shardVersion": layout.version,
        "status": OutboxStatus.READY.value,
        "attempts": 0,
        "createdAt": created_at,
        "dueAt": due_at,
    }
    if lease is None:
        item["GSI2SK"] = _SPELLED_DUE.format({"due": due_at, "event_id": event_id})
    else:
        _claim(item, lease)
    return Put(item, ItemAbsent())


@dataclass(frozen=True, slots=True)
class Lease:
    owner: str
    token: str
    until: datetime


@dataclass(frozen=True, slots=True)
class ClaimedItem:
    event: OutboxEvent
    lease: Lease
    attempts: int
    """Attempts including this one."""
    shard: int

    @property
    def event_id(self) -> str:
        return self.event.event_id

    @classmethod
    def from_item(cls, item: Item, lease: Lease) -> ClaimedItem:
        event = event_from_payload(item["kind"], item["payload"])
        return cls(event, lease, int(item.get("attempts", 0)) + 1, int(item["shard"]))

    @classmethod
    def born(cls, item: Item, lease: Lease, event: OutboxEvent | None = None) -> ClaimedItem:
        """An item ``born_put`` wrote under ``lease``: its first attempt.
        ``event``: the one the item's payload was made of, when the caller
        holds it, so it is not parsed back (the payload stays what others read)."""
        if event is None:
            event = event_from_payload(item["kind"], item["payload"])
        return cls(event, lease, 1, int(item["shard"]))


def born_put(put: Put, lease: Lease) -> Put:
    """``put`` (an ``outbox_put``) with its item born claimed under ``lease``,
    as ``claim_update`` would leave it: first attempt, due again when the
    lease ends. The relay holding the lease works it after the commit
    without a claim's write; if the process dies first, the item is
    claimable once the lease ends, as any item a dead process claimed
    (docs/design.md, Pipeline)."""
    item = dict(put.item)
    _claim(item, lease)
    return Put(item, put.condition)


def _claim(item: Item, lease: Lease) -> None:
    """A ready item as ``claim_update`` leaves it, in place."""
    item["status"] = OutboxStatus.LEASED.value
    item["leaseOwner"] = lease.owner
    item["leaseToken"] = lease.token
    sort = due_sort(lease.until, item["id"])
    item["leaseUntil"] = sort[_DUE_AT]
    item["GSI2SK"] = sort
    item["attempts"] = 1


def claim_update(item: Item, lease: Lease) -> Update:
    """Wins only if nobody moved the item since ``item`` was read."""
    event_id = item["id"]
    sort = due_sort(lease.until, event_id)
    return Update(
        outbox_key(event_id),
        set={
            "status": OutboxStatus.LEASED.value,
            "leaseOwner": lease.owner,
            "leaseToken": lease.token,
            "leaseUntil": sort[_DUE_AT],
            "GSI2SK": sort,
        },
        add={"attempts": 1},
        condition=Compare("GSI2SK", Comparison.EQ, item["GSI2SK"]),
    )


def _held(token: str) -> Compare:
    return Compare("leaseToken", Comparison.EQ, token)


def complete_delete(event_id: str, token: str) -> Delete:
    return Delete(outbox_key(event_id), _held(token))


def _error_text(error: str) -> str:
    return error[:ERROR_MAX_CHARS]


def retry_update(event_id: str, token: str, *, due: datetime, error: str) -> Update:
    return Update(
        outbox_key(event_id),
        set={
            "status": OutboxStatus.READY.value,
            "GSI2SK": due_sort(due, event_id),
            "dueAt": format_datetime(due),
            "lastError": _error_text(error),
        },
        remove=_LEASE_ATTRIBUTES,
        condition=_held(token),
    )


def release_update(event_id: str, token: str, *, due: datetime) -> Update:
    """Gives a claimed item back unworked, as a stopping process does: due at
    once, and the attempt it never made is returned."""
    return Update(
        outbox_key(event_id),
        set={
            "status": OutboxStatus.READY.value,
            "GSI2SK": due_sort(due, event_id),
            "dueAt": format_datetime(due),
        },
        add={"attempts": -1},
        remove=_LEASE_ATTRIBUTES,
        condition=_held(token),
    )


def park_update(
    event_id: str, *, now: datetime, error: str, token: str | None = None, sort: str | None = None
) -> Update:
    """Parks an item the caller holds (``token``) or one it read and found out
    of attempts (``sort``: its GSI2SK then)."""
    condition = _held(token) if token is not None else Compare("GSI2SK", Comparison.EQ, sort)
    return Update(
        outbox_key(event_id),
        set={
            "status": OutboxStatus.PARKED.value,
            "GSI2PK": OUTBOX_PARKED.partition({}),
            "GSI2SK": PARKED_SORT.format({"parked_at": now, "event_id": event_id}),
            "parkedAt": format_datetime(now),
            "lastError": _error_text(error),
        },
        remove=_LEASE_ATTRIBUTES,
        condition=condition,
    )


def requeue_update(item: Item, *, now: datetime, settings: PipelineSettings) -> Update:
    """Back to the ready queue with fresh attempts, for an operator who fixed the cause."""
    event_id = item["id"]
    layout = settings.current_layout
    shard = shard_of(event_id, layout.count)
    return Update(
        outbox_key(event_id),
        set={
            "status": OutboxStatus.READY.value,
            "GSI2PK": OUTBOX_DUE.partition_key.format({"shard": shard}),
            "GSI2SK": due_sort(now, event_id),
            "dueAt": format_datetime(now),
            "shard": shard,
            "shardVersion": layout.version,
            "attempts": 0,
        },
        remove=("parkedAt",),
        condition=Compare("GSI2SK", Comparison.EQ, item["GSI2SK"]),
    )


def describe(item: Item) -> dict[str, Any]:
    """What an operator needs to see about a parked item."""
    return {
        "id": item["id"],
        "kind": item["kind"],
        "attempts": int(item.get("attempts", 0)),
        "createdAt": item.get("createdAt"),
        "parkedAt": item.get("parkedAt"),
        "lastError": item.get("lastError"),
    }
