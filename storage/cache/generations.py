"""Write generations: a read that missed keeps its answer only if no write
it depends on was applied while it ran.

Every applied invalidation takes the next sequence number and stamps it on
the slots it touched: item keys, (index, partition) pairs, whole indexes. A
read notes the sequence when it starts and, when its answer arrives, stores
it only if none of its slots carries a later stamp. Stamps are kept only
while a read is in flight that could need them, and at most ``limit`` of
them: forgetting the oldest raises the floor below which a read cannot prove
anything, so it stores nothing (docs/design.md, Storage cache).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable

__all__ = ["GENERATION_SLOTS_MAX", "Generations"]

GENERATION_SLOTS_MAX = 65_536


class Generations:
    def __init__(self, limit: int = GENERATION_SLOTS_MAX) -> None:
        self.sequence = 0
        self._floor = 0
        self._stamps: dict[Hashable, int] = {}
        self._reading = 0
        self._limit = limit

    @property
    def reading(self) -> bool:
        """Whether a read is in flight (else ``stamp`` keeps no slot)."""
        return self._reading > 0

    def begin(self) -> int:
        self._reading += 1
        return self.sequence

    def end(self) -> None:
        self._reading -= 1
        if not self._reading and self._stamps:
            self._stamps.clear()
            self._floor = self.sequence

    def unchanged(self, start: int, slots: Iterable[Hashable]) -> bool:
        """Whether no write touching ``slots`` was applied since ``start``."""
        if start < self._floor:
            return False
        if start == self.sequence:
            return True
        stamps = self._stamps
        return all(stamps.get(slot, 0) <= start for slot in slots)

    def stamp(self, slots: Iterable[Hashable]) -> None:
        self.sequence += 1
        if not self._reading:
            self._floor = self.sequence  # nobody in flight needs the stamps
            return
        stamps, sequence = self._stamps, self.sequence
        for slot in slots:
            stamps.pop(slot, None)
            stamps[slot] = sequence
        while len(stamps) > self._limit:
            oldest = next(iter(stamps))
            self._floor = max(self._floor, stamps.pop(oldest))

    def forget_all(self) -> None:
        """Every read in flight stores nothing (a flush)."""
        self.sequence += 1
        self._floor = self.sequence
        self._stamps.clear()
