"""Conditional writes of several outbox items in one transaction, each won or
lost on its own (docs/design.md, "Relay backpressure").

A transaction applies whole or not at all, and a failed condition names the
action that failed. So the action that lost (its item claimed or taken over
by another relay) is dropped and the rest are written again: every action
that still holds is written, in as many transactions as actions were lost,
plus one. Claims and completions both write their batches this way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from domain.errors import ConditionFailed
from storage import Storage, WriteAction

__all__ = ["UnnamedLoss", "write_holding"]


class UnnamedLoss(Exception):
    """A failed condition that named no action: any of ``pending`` may still
    hold; none of them was written."""

    def __init__(self, failed: ConditionFailed, pending: list[int]) -> None:
        super().__init__(failed.detail)
        self.failed = failed
        self.pending = pending


async def write_holding(
    storage: Storage, actions: Sequence[WriteAction], lost: Callable[[int], None]
) -> None:
    """Writes every action whose condition holds, in one transaction once the
    ones that fail are dropped; ``lost`` is told the index of each dropped.
    Raises ``UnnamedLoss`` as above, and what the store raises but a failed
    condition (then any action may have been written)."""
    pending = list(range(len(actions)))
    while pending:
        try:
            await storage.transact_write([actions[index] for index in pending])
        except ConditionFailed as error:
            if not 0 <= error.index < len(pending):
                raise UnnamedLoss(error, pending) from None
            lost(pending.pop(error.index))
            continue
        return
