"""Outbox items claimed together: one transaction for the items a poll page or
the hint loop has room for, not one each (docs/design.md, "Relay backpressure").

A relay that fell behind (its lane stalled on alert commits, its hints full)
claimed each item in a transaction of its own, awaited one after another in
a poll: a commit per item on the writer's thread, a future and a wake-up on
the event loop's. Every claim keeps its condition (the item's GSI2 sort key
unchanged since it was read), and a transaction applies whole or not at all,
so one item another relay claimed first (its condition fails) is dropped from
the batch and the rest are written again; exactly one claimer wins each item,
as before.
"""

from __future__ import annotations

from collections.abc import Sequence

from domain.errors import ConditionFailed
from storage import Item, Storage, WriteAction
from storage.limits import TRANSACT_MAX_ITEMS

from .conditional import UnnamedLoss, write_holding
from .items import Lease, claim_update

__all__ = ["CLAIMS_MAX", "claim_all"]

CLAIMS_MAX = TRANSACT_MAX_ITEMS
"""A transaction's actions at most (docs/design.md, Storage)."""


async def claim_all(storage: Storage, claims: Sequence[tuple[Item, Lease]]) -> list[bool]:
    """Claims each item under its lease; whether each claim won, in order.
    ``claims`` holds each event at most once (one transaction may not write an
    item twice). Raises what the store raises but a failed condition: then
    any claim may have applied, as a single claim that failed may have."""
    won = [False] * len(claims)
    for start in range(0, len(claims), CLAIMS_MAX):
        chunk = range(start, min(start + CLAIMS_MAX, len(claims)))
        actions = [claim_update(*claims[index]) for index in chunk]
        lost: set[int] = set()
        try:
            await write_holding(storage, actions, lost.add)
        except UnnamedLoss as unnamed:
            # Which claim lost is unknown: each is tried alone.
            for offset in unnamed.pending:
                won[chunk[offset]] = await _claim_one(storage, actions[offset])
            continue
        for offset, index in enumerate(chunk):
            won[index] = offset not in lost
    return won


async def _claim_one(storage: Storage, action: WriteAction) -> bool:
    try:
        await storage.transact_write([action])
    except ConditionFailed:
        return False
    return True
