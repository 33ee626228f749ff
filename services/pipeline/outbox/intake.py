"""What the relay takes on, and how much (docs/design.md, "Relay backpressure").

A lease starts ticking when an item is claimed, so the relay claims only what
it has room to work at once: as many alert items (worked one at a time, in one
lane) as it has lately worked in half a lease, at most ``claim_batch``, and
``webhook_concurrency`` deliveries. Items committed in
this process arrive as hints, kept in a bounded queue until there is room;
a hint that does not fit is dropped and counted, and the item waits in the
table (AP19), where the next poll finds it. Nothing here grows with load.
"""

from __future__ import annotations

from collections import deque

from services.pipeline.events import EventKind
from services.pipeline.settings import PipelineSettings
from storage import Item

__all__ = ["HINTS_PER_BATCH", "Intake", "is_webhook"]

HINTS_PER_BATCH = 4
"""Hints kept per alert claimed at once: enough to ride out a burst of
commits between two polls, few enough to hold no real memory."""
_SMOOTHING = 0.2
"""Weight of the newest item in the moving average of an alert item's time."""


_WEBHOOK = EventKind.WEBHOOK.value


def is_webhook(item: Item) -> bool:
    return bool(item.get("kind") == _WEBHOOK)


class Intake:
    def __init__(self, settings: PipelineSettings) -> None:
        self.hints_max = HINTS_PER_BATCH * settings.claim_batch
        self._claim_batch = settings.claim_batch
        self._half_lease = settings.lease.total_seconds() / 2
        self.item_seconds = 0.0
        """Moving average of the time one alert item takes in the lane."""
        self._hints: deque[tuple[bool, Item]] = deque()
        """(is a webhook, item), oldest first: the kind is read once, not at
        every look for a hint that fits."""
        self._room = {False: settings.claim_batch, True: settings.webhook_concurrency}
        self._taken = {False: 0, True: 0}
        self.deferred = 0
        """Committed items left to the poll because the hint queue was full."""
        self.overflowed = False
        """A hint was dropped, or the last poll read as many due items as it
        had room for: poll again once half the room is free, not at the interval."""

    def offer(self, item: Item) -> None:
        if len(self._hints) >= self.hints_max:
            self.deferred += 1
            self.overflowed = True
            return
        self._hints.append((is_webhook(item), item))

    def withdraw(self, event_id: str) -> None:
        """Drops the hint for an item a poll is claiming: the hint loop's claim
        of it could only lose (docs/design.md, Verify path)."""
        for index, (_, item) in enumerate(self._hints):
            if item["id"] == event_id:
                del self._hints[index]
                return

    def fits(self, item: Item) -> bool:
        return self.has_room(is_webhook(item))

    def has_room(self, webhook: bool) -> bool:
        return self._taken[webhook] < self._room[webhook]

    @property
    def full(self) -> bool:
        return all(self._taken[kind] >= self._room[kind] for kind in self._room)

    @property
    def free(self) -> int:
        """Items of either kind there is room for: as many as a poll reads."""
        return sum(max(0, self._room[kind] - self._taken[kind]) for kind in self._room)

    def half_free(self, webhook: bool) -> bool:
        """Half the room of a kind is free: a poll now claims a batch of it,
        not the one item just worked."""
        return 2 * (self._room[webhook] - self._taken[webhook]) >= self._room[webhook]

    def take(self, webhook: bool) -> None:
        self._taken[webhook] += 1

    def done(self, webhook: bool) -> None:
        self._taken[webhook] -= 1

    def worked(self, seconds: float) -> None:
        """An alert item took ``seconds``: the lane's room follows its pace,
        so the last item claimed is reached within half a lease."""
        self.item_seconds += _SMOOTHING * (seconds - self.item_seconds)
        paced = int(self._half_lease / self.item_seconds) if self.item_seconds > 0 else 0
        self._room[False] = max(1, min(self._claim_batch, paced or self._claim_batch))

    def pop_ready(self) -> Item | None:
        """The oldest hint there is room for, with its room taken; the caller
        gives the room back (``done``) if its claim loses."""
        room = {kind: self._taken[kind] < self._room[kind] for kind in self._room}
        if not any(room.values()):
            return None
        for index, (webhook, item) in enumerate(self._hints):
            if room[webhook]:
                del self._hints[index]
                self.take(webhook)
                return item
        return None

    @property
    def waiting(self) -> int:
        return len(self._hints)

    def taken(self, webhook: bool) -> int:
        return self._taken[webhook]
