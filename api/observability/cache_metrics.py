"""The storage cache's series on ``/metrics`` (docs/design.md, Storage cache).

The cache counts in plain integers on the request path (``CacheStats``);
these counters take the difference since the last scrape, so a request pays
nothing for them. Labels are access pattern ids and fixed reasons.
"""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge

from storage.cache import CacheCounts, CacheStats

__all__ = ["CacheSeries"]


class CacheSeries:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.reads = Counter(
            "proofgate_cache_reads",
            "Reads of patterns the storage cache may serve, by access pattern and "
            "result (hit: no storage call; miss: read and kept if still exact)",
            ["access_pattern", "result"],
            registry=registry,
        )
        self.evictions = Counter(
            "proofgate_cache_evictions",
            "Entries the storage cache let go, by access pattern and reason "
            "(capacity: the byte cap's LRU; expired: TTL backstop or an item's expiry)",
            ["access_pattern", "reason"],
            registry=registry,
        )
        self.invalidations = Counter(
            "proofgate_cache_invalidations",
            "Invalidation events applied (one per committed write) and the entries "
            "they dropped (event: events, entry: entries dropped, flush: full flushes)",
            ["kind"],
            registry=registry,
        )
        self.bytes = Gauge(
            "proofgate_cache_bytes",
            "Bytes the storage cache holds (at most PROOFGATE_CACHE_BYTES)",
            registry=registry,
            multiprocess_mode="livesum",
        )
        self.trusted = Gauge(
            "proofgate_cache_trusted",
            "1 while the storage cache may serve, 0 while it reads through "
            "(invalidations from other processes cannot be heard)",
            registry=registry,
            multiprocess_mode="livemin",
        )
        self._stats: CacheStats | None = None
        self._held: Callable[[], int] | None = None
        self._trusted: Callable[[], bool] = lambda: True
        self._last = CacheCounts({}, {}, {}, 0, 0, 0)

    def watch(
        self, stats: CacheStats, held: Callable[[], int], trusted: Callable[[], bool]
    ) -> None:
        self._stats, self._held, self._trusted = stats, held, trusted

    def refresh(self) -> None:
        if self._stats is None or self._held is None:
            return
        now, last = self._stats.counts(), self._last
        for result, counts, before in (
            ("hit", now.hits, last.hits),
            ("miss", now.misses, last.misses),
        ):
            for ap_id, count in counts.items():
                if count > before.get(ap_id, 0):
                    self.reads.labels(ap_id, result).inc(count - before.get(ap_id, 0))
        for (ap_id, reason), count in now.evictions.items():
            grown = count - last.evictions.get((ap_id, reason), 0)
            if grown:
                self.evictions.labels(ap_id, reason).inc(grown)
        for kind, count, before_count in (
            ("event", now.invalidations, last.invalidations),
            ("entry", now.dropped, last.dropped),
            ("flush", now.flushes, last.flushes),
        ):
            if count > before_count:
                self.invalidations.labels(kind).inc(count - before_count)
        self.bytes.set(self._held())
        self.trusted.set(1 if self._trusted() else 0)
        self._last = now
