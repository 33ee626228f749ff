"""Hit ratios per access pattern from a gateway's ``/metrics`` scrape, for
``proofgate explain --hit-ratios`` and ``proofgate capacity --hit-ratios``
(docs/design.md, Storage cache)."""

from __future__ import annotations

import sys
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from domain.errors import ConfigurationError

__all__ = ["hit_ratios", "read_scrape"]

SCRAPE_HINT = (
    "save a scrape first: curl -H 'Authorization: Bearer <admin key>' <gateway>/metrics "
    "> scrape.txt"
)

_READS = "proofgate_cache_reads"


def hit_ratios(scrape: str) -> dict[str, float]:
    """Hits over hits and misses, for each pattern the scrape counts reads of."""
    hits: dict[str, float] = {}
    reads: dict[str, float] = {}
    for family in text_string_to_metric_families(scrape):
        if family.name != _READS:
            continue
        for sample in family.samples:
            if not sample.name.endswith("_total"):
                continue
            pattern = sample.labels["access_pattern"]
            reads[pattern] = reads.get(pattern, 0.0) + sample.value
            if sample.labels["result"] == "hit":
                hits[pattern] = hits.get(pattern, 0.0) + sample.value
    return {p: hits.get(p, 0.0) / n for p, n in reads.items() if n}


def read_scrape(source: str) -> str:
    """The scrape saved in ``source`` (``-``: standard input)."""
    try:
        return sys.stdin.read() if source == "-" else Path(source).read_text()
    except OSError as error:
        raise ConfigurationError(
            f"cannot read {source}: {error.strerror or error}", hint=SCRAPE_HINT
        ) from None
