"""When the cache may be trusted: the gate invalidations from elsewhere pass.

This process applies its own writes' invalidations as they commit (and
``CachedStorage.settled_through`` says up to when they all have been).
Writes of other processes reach it only through a channel
(``CachedStorage.invalidate``, fed by whoever listens); ``Freshness`` is what
that channel says about itself (docs/design.md, Storage cache):

- ``trusted()``: whether every invalidation committed elsewhere reaches this
  process. While it is False the cache neither serves nor keeps anything;
  the channel calls ``CachedStorage.flush()`` when it hears again, since
  what it missed is unknown.
- ``heard_through()``: a wall-clock time such that every write committed
  by any other process before it has been applied here (``inf``: there is
  no other writer; ``-inf``: nothing can be proved, ever). A pattern strong
  only for freshness is served when this, and this process's own
  ``settled_through``, are at or after the read's start.
"""

from __future__ import annotations

import math
from typing import Protocol

__all__ = ["Freshness", "LocalFreshness"]


class Freshness(Protocol):
    def trusted(self) -> bool: ...

    def heard_through(self) -> float: ...


class LocalFreshness:
    """No channel: this process's own writes are all it hears.

    ``sole_writer``: the operator's word that no other process writes the
    store while this one runs (``PROOFGATE_CACHE_SOLE_WRITER``; one worker,
    no other gateway, no CLI job that writes). Then the process's own writes
    are all the writes, and every one committed before a read began has been
    applied once none of its own is in flight (docs/design.md, Storage
    cache, The watermark). Without it nothing is proved: freshness patterns
    pass through."""

    def __init__(self, *, sole_writer: bool = False) -> None:
        self.sole_writer = sole_writer

    def trusted(self) -> bool:
        return True

    def heard_through(self) -> float:
        return math.inf if self.sole_writer else -math.inf
