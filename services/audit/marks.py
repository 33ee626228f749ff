"""A change made once, with its audit entry: revoking an API key or an
integration, resolving a threat.

The change is one update, conditional on the item existing and not being
marked yet; its audit entry (and any companion write) share its
transaction, so the entry is written exactly when the change is. A second
or concurrent call finds the condition failed and writes nothing: the
caller re-reads the item and answers with it, which makes repeating harmless.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from domain.errors import ConditionFailed
from storage import All, ItemExists, Key, Update, WriteAction
from storage.conditions import Condition

from ..context import CommandContext
from ..transact import transact
from .items import audit_entry

__all__ = ["mark_once"]


async def mark_once(
    context: CommandContext,
    key: Key,
    *,
    mark: Mapping[str, Any],
    unmarked: Condition,
    action: str,
    brand_id: str,
    target_id: str,
    now: datetime,
    along: Sequence[WriteAction] = (),
) -> bool:
    """True when this call made the change. False when ``unmarked`` (or the
    item's existence) no longer held: nothing was written. A failed
    condition of an ``along`` write is the caller's own error and is raised."""
    try:
        await transact(
            context.storage,
            [
                Update(key, set=mark, condition=All(ItemExists(), unmarked)),
                *along,
                audit_entry(
                    context.principal, action, now, brand_id=brand_id, target_ids=[target_id]
                ),
            ],
        )
    except ConditionFailed as error:
        if error.index != 0:
            raise
        return False
    return True
