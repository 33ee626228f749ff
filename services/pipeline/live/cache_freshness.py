"""What the invalidation channel knows about itself: the cache's ``Freshness``
(docs/design.md, Cache invalidations across processes).

Every process publishes its invalidations in order, numbered 1, 2, ... under
a publisher id of its own, and a heartbeat carrying its last number whenever
it has published nothing for a while. A listener therefore knows:

- it is deaf while its subscription is not confirmed, or while its own
  heartbeats stop coming back (a broker that accepts but does not deliver);
  ``trusted()`` is False then, and it flushes the cache when it hears again;
- it missed a message when a publisher's number skips (a dropped publish, a
  queue that overflowed, a reconnect): what was missed is unknown, so it
  flushes at once. The first message heard from a publisher also says when
  its previous invalidation was sent: sent after this process began
  listening (less ``skew``), it was missed, and the cache is flushed too.

``heard_through()`` proves nothing yet (``-inf``): a process that started a
moment ago, or a write committed but not yet handed to the channel, is not
in any publisher's numbering, so ``freshness`` patterns still read through.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

__all__ = ["PUBLISHERS_MAX", "ChannelFreshness"]

PUBLISHERS_MAX = 1024
"""Publishers whose numbering is followed; past it (many restarts) the
numbering starts over, after a flush."""


class ChannelFreshness:
    def __init__(
        self,
        flush: Callable[[], None],
        *,
        deaf_after: float,
        skew: float,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        """``flush``: drops the whole cache (``CachedStorage.flush``);
        ``deaf_after``: seconds without hearing this process's own heartbeat
        after which it no longer trusts the channel."""
        self._flush = flush
        self._deaf_after = deaf_after
        self._clock = clock
        self._wall_clock = wall_clock
        self._skew = skew
        self._since = math.inf
        self._listening = False
        self._heard_own = -math.inf
        self._last: dict[str, int] = {}
        self.gaps = 0
        """Times a publisher's numbering skipped (a metric)."""
        self.flushes = 0

    # --- Freshness ---------------------------------------------------------------

    def trusted(self) -> bool:
        return self._listening and self._clock() - self._heard_own <= self._deaf_after

    def heard_through(self) -> float:
        return -math.inf

    # --- what the channel reports ------------------------------------------------

    def listening(self) -> None:
        """The subscription is confirmed: from now every message is heard,
        and what was published before is unknown."""
        self._last.clear()
        self._flushed()
        self._since = self._wall_clock()
        self._heard_own = self._clock()
        self._listening = True

    def deaf(self) -> None:
        self._listening = False

    def heard(
        self, publisher: str, number: int, previous: float, *, invalidation: bool, own: bool
    ) -> bool:
        """A message of ``publisher``, its ``number`` (an invalidation's own,
        or a heartbeat's last) and when the invalidation before it (a
        heartbeat's: numbered ``number``) was sent (0: none); True when an
        invalidation is to be applied."""
        if own:
            if self._clock() - self._heard_own > self._deaf_after:
                self._flushed()  # deaf for a while: what was missed is unknown
            self._heard_own = self._clock()
            return False
        last = self._last.get(publisher)
        expected = number - 1 if invalidation else number
        if (last is not None and last < expected) or (
            last is None and previous > self._since - self._skew
        ):
            self.gaps += 1
            self._flushed()
        if last is None and len(self._last) >= PUBLISHERS_MAX:
            self._last.clear()
            self._flushed()
        self._last[publisher] = max(number, last or 0)
        return invalidation

    def last_of(self, publisher: str) -> int | None:
        """The last number heard from ``publisher``; None: not heard yet."""
        return self._last.get(publisher)

    def _flushed(self) -> None:
        self.flushes += 1
        self._flush()
