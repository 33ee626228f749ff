"""The response cache's series on ``/metrics`` (docs/design.md, Response cache).

As the storage cache's (``cache_metrics.py``): plain integers on the request
path, turned into counters by their growth since the last scrape. Labels are
the operations the cache takes (a list from the settings) and fixed reasons.
"""

from __future__ import annotations

from collections import Counter as Counts
from collections.abc import Callable
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge

__all__ = ["ResponseCacheSeries"]


class ResponseStats(Protocol):
    """``api/graphql/response_cache``'s counts, as this module reads them."""

    hits: Counts[str]
    misses: Counts[str]
    evictions: Counts[tuple[str, str]]
    skipped: Counts[str]
    invalidations: int
    dropped: int
    flushes: int


class ResponseCacheSeries:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.reads = Counter(
            "proofgate_response_cache_reads",
            "Requests for operations the response cache takes, by operation and result "
            "(hit: answered without executing; miss: executed)",
            ["operation", "result"],
            registry=registry,
        )
        self.evictions = Counter(
            "proofgate_response_cache_evictions",
            "Responses the cache let go, by operation and reason (capacity: the byte "
            "cap's LRU; expired: TTL backstop or an item's expiry)",
            ["operation", "reason"],
            registry=registry,
        )
        self.invalidations = Counter(
            "proofgate_response_cache_invalidations",
            "Invalidation events heard from the storage cache (event), the responses "
            "they dropped (entry), and full flushes (flush)",
            ["kind"],
            registry=registry,
        )
        self.skipped = Counter(
            "proofgate_response_cache_skipped",
            "Answers executed but not kept, by reason (errors, read through, "
            "overtaken by a write, untrusted, too large or expiring)",
            ["reason"],
            registry=registry,
        )
        self.bytes = Gauge(
            "proofgate_response_cache_bytes",
            "Bytes the response cache holds (at most PROOFGATE_RESPONSE_CACHE_BYTES)",
            registry=registry,
            multiprocess_mode="livesum",
        )
        self._stats: ResponseStats | None = None
        self._held: Callable[[], int] = lambda: 0
        self._last: dict[tuple[str, ...], int] = {}

    def watch(self, stats: ResponseStats, held: Callable[[], int]) -> None:
        self._stats, self._held = stats, held

    def refresh(self) -> None:
        stats = self._stats
        if stats is None:
            return
        last = self._last
        for operation, count in stats.hits.items():
            _grow(self.reads.labels(operation, "hit"), count, last, ("hit", operation))
        for operation, count in stats.misses.items():
            _grow(self.reads.labels(operation, "miss"), count, last, ("miss", operation))
        for (operation, reason), count in stats.evictions.items():
            _grow(
                self.evictions.labels(operation, reason),
                count,
                last,
                ("evicted", operation, reason),
            )
        for reason, count in stats.skipped.items():
            _grow(self.skipped.labels(reason), count, last, ("skipped", reason))
        for kind, count in (
            ("event", stats.invalidations),
            ("entry", stats.dropped),
            ("flush", stats.flushes),
        ):
            _grow(self.invalidations.labels(kind), count, last, ("invalidation", kind))
        self.bytes.set(self._held())


def _grow(series: Any, count: int, last: dict[tuple[str, ...], int], key: tuple[str, ...]) -> None:
    """Adds to ``series`` what ``count`` grew by since the last scrape."""
    grown = count - last.get(key, 0)
    if grown > 0:
        series.inc(grown)
    last[key] = count
