"""The cache's counts, read by the metrics and ``proofgate explain``.

Plain integers, bumped on the request path; labels come from closed sets
(access pattern ids, a few event names), so the series stay bounded.
"""

from __future__ import annotations

from collections import Counter
from typing import NamedTuple

__all__ = ["CacheCounts", "CacheStats"]


class CacheCounts(NamedTuple):
    hits: dict[str, int]
    misses: dict[str, int]
    evictions: dict[tuple[str, str], int]
    """By (access pattern, reason): ``capacity`` (LRU), ``expired`` (TTL or item expiry)."""
    invalidations: int
    """Invalidation events applied (this process's writes and any heard)."""
    dropped: int
    """Entries those events dropped."""
    flushes: int


class CacheStats:
    __slots__ = ("dropped", "evictions", "flushes", "hits", "invalidations", "misses")

    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()
        self.misses: Counter[str] = Counter()
        self.evictions: Counter[tuple[str, str]] = Counter()
        self.invalidations = 0
        self.dropped = 0
        self.flushes = 0

    def evicted(self, ap_id: str, reason: str) -> None:
        self.evictions[(ap_id, reason)] += 1

    def hit_ratio(self, ap_id: str) -> float | None:
        hits, misses = self.hits[ap_id], self.misses[ap_id]
        return None if not hits + misses else hits / (hits + misses)

    def counts(self) -> CacheCounts:
        return CacheCounts(
            dict(self.hits),
            dict(self.misses),
            dict(self.evictions),
            self.invalidations,
            self.dropped,
            self.flushes,
        )
