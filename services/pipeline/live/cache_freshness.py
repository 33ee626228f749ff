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

``heard_through()`` is the watermark: each message carries its publisher's
``w`` (every write of its own that began before ``w``, by its clock, was
handed to the channel before the message), and every publisher heard within
``gone_after`` holds it back to its last ``w``, less ``clock_skew``. It is
``-inf`` until this process has listened for ``deaf_after`` (every live
publisher heartbeats within it) and while deaf. A publisher not heard yet
is not counted (docs/design.md, Cache invalidations across processes, The
watermark, says what that leaves open).
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
        clock_skew: float,
        gone_after: float,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        """``flush``: drops the whole cache (``CachedStorage.flush``);
        ``deaf_after``: seconds without hearing this process's own heartbeat
        after which it no longer trusts the channel; ``clock_skew``: the most
        two processes' wall clocks differ; ``gone_after``: seconds of silence
        after which a publisher no longer holds the watermark back."""
        self._flush = flush
        self._deaf_after = deaf_after
        self._clock_skew = clock_skew
        self._gone_after = gone_after
        self._through: dict[str, tuple[float, float]] = {}
        """Per publisher: its last watermark and when it was heard (monotonic)."""
        self._listened_at = math.inf
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
        now = self._clock()
        if not self.trusted() or now - self._listened_at < self._deaf_after:
            return -math.inf
        through = math.inf
        for publisher, (watermark, heard_at) in list(self._through.items()):
            if now - heard_at > self._gone_after:
                del self._through[publisher]  # stopped, or cut off: see the bound
            elif watermark < through:
                through = watermark
        return through - self._clock_skew

    # --- what the channel reports ------------------------------------------------

    def listening(self) -> None:
        """The subscription is confirmed: from now every message is heard,
        and what was published before is unknown."""
        self._last.clear()
        self._through.clear()
        self._flushed()
        self._since = self._wall_clock()
        self._heard_own = self._listened_at = self._clock()
        self._listening = True

    def deaf(self) -> None:
        self._listening = False

    def heard(
        self,
        publisher: str,
        number: int,
        previous: float,
        *,
        invalidation: bool,
        own: bool,
        through: float = 0.0,
    ) -> bool:
        """A message of ``publisher``, its ``number`` (an invalidation's own,
        or a heartbeat's last), when the invalidation before it (a
        heartbeat's: numbered ``number``) was sent (0: none) and its
        watermark ``through``; True when an invalidation is to be applied
        (before anything reads the watermark: the caller applies it at once)."""
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
        known = self._through.get(publisher)
        if known is None and len(self._through) >= PUBLISHERS_MAX:
            # Forgetting publishers could raise the watermark: prove nothing
            # until every live one is heard again.
            self._through.clear()
            self._listened_at = self._clock()
        watermark = through if known is None else max(through, known[0])
        self._through[publisher] = (watermark, self._clock())
        return invalidation

    def heard_of(self, publisher: str) -> tuple[float, float] | None:
        """``publisher``'s last watermark and when it was heard (this
        process's monotonic clock); None: not heard, or gone."""
        return self._through.get(publisher)

    def last_of(self, publisher: str) -> int | None:
        """The last number heard from ``publisher``; None: not heard yet."""
        return self._last.get(publisher)

    def _flushed(self) -> None:
        self.flushes += 1
        self._flush()
