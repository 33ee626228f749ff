"""The storage cache's counts on /metrics: what happened since the last scrape
is added, so two scrapes never count one hit twice."""

from __future__ import annotations

from api.observability.metrics import Metrics
from storage.cache import CacheStats


def _value(text: str, series: str) -> float:
    for line in text.splitlines():
        if line.startswith(series + " "):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"no {series} in the scrape")


def test_hits_misses_evictions_and_invalidations_are_scraped() -> None:
    metrics, stats = Metrics(), CacheStats()
    held, trusted = [1234], [True]
    metrics.cache.watch(stats, lambda: held[0], lambda: trusted[0])
    stats.hits["AP07"] += 3
    stats.misses["AP07"] += 1
    stats.evicted("AP01", "capacity")
    stats.invalidations += 2
    stats.dropped += 5
    text = metrics.render().decode()
    assert _value(text, 'proofgate_cache_reads_total{access_pattern="AP07",result="hit"}') == 3
    assert _value(text, 'proofgate_cache_reads_total{access_pattern="AP07",result="miss"}') == 1
    assert (
        _value(text, 'proofgate_cache_evictions_total{access_pattern="AP01",reason="capacity"}')
        == 1
    )
    assert _value(text, 'proofgate_cache_invalidations_total{kind="event"}') == 2
    assert _value(text, 'proofgate_cache_invalidations_total{kind="entry"}') == 5
    assert _value(text, "proofgate_cache_bytes") == 1234
    assert _value(text, "proofgate_cache_trusted") == 1
    stats.hits["AP07"] += 1
    trusted[0] = False
    text = metrics.render().decode()
    assert _value(text, "proofgate_cache_trusted") == 0
    assert _value(text, 'proofgate_cache_reads_total{access_pattern="AP07",result="hit"}') == 4
