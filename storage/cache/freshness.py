"""When the cache may be trusted: the gate invalidations from elsewhere pass.

This process applies its own writes' invalidations as they commit. Writes
of other processes reach it only through a channel (``CachedStorage.invalidate``,
fed by whoever listens); ``Freshness`` is what that channel says about itself
(docs/design.md, Storage cache):

- ``trusted()``: whether every invalidation committed elsewhere reaches this
  process. While it is False the cache neither serves nor keeps anything;
  the channel calls ``CachedStorage.flush()`` when it hears again, since
  what it missed is unknown.
- ``heard_through()``: a wall-clock time such that every write committed
  anywhere before it has been applied here. A pattern strong only for
  freshness is served when this is at or after the read's start.
"""

from __future__ import annotations

import math
from typing import Protocol

__all__ = ["Freshness", "LocalFreshness"]


class Freshness(Protocol):
    def trusted(self) -> bool: ...

    def heard_through(self) -> float: ...


class LocalFreshness:
    """This process alone: its own writes are all it hears, so it can never
    prove another process wrote nothing; freshness patterns pass through."""

    def trusted(self) -> bool:
        return True

    def heard_through(self) -> float:
        return -math.inf
