"""A latency histogram counted in process and read at the scrape.

prometheus_client's ``Histogram.observe`` takes a lock for its sum and again
for its bucket, after a walk of the bounds in Python: ~25,000 instructions of a
small query's ~420,000 (callgrind, docs/design.md, The server under the app),
for two numbers. Here an observation is a ``bisect`` and two list additions;
``collect`` turns the counts into the same samples (cumulative buckets with
``le`` spelled as prometheus_client spells it, ``_count`` and ``_sum``) when
the registry is scraped. One process only: with several
(``PROMETHEUS_MULTIPROC_DIR``), ``Metrics`` keeps prometheus_client's
file-backed ``Histogram``, which the other processes read.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Sequence

from prometheus_client import CollectorRegistry
from prometheus_client.metrics_core import HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

__all__ = ["HeldHistogram"]


class HeldHistogram(Collector):
    """Observations by the value of one label; each label value's series is
    a list of the counts per bucket (the last, ``+Inf``) and then the sum.
    The label values come from closed sets (the callers'), so the series are
    bounded as a labelled ``Histogram``'s are."""

    def __init__(
        self,
        name: str,
        documentation: str,
        label: str,
        buckets: Sequence[float],
        registry: CollectorRegistry,
    ) -> None:
        self.name = name
        self.documentation = documentation
        self.label = label
        self.bounds = tuple(float(bound) for bound in buckets)
        les = (floatToGoString(bound) for bound in self.bounds)  # type: ignore[no-untyped-call]
        self._les = [*les, "+Inf"]
        self.series: dict[str, list[float]] = {}
        registry.register(self)

    def observe(self, value: str, seconds: float) -> None:
        """As ``Histogram.labels(value).observe(seconds)``: counted in the
        first bucket whose bound is at least ``seconds``."""
        counts = self.series.get(value)
        if counts is None:
            counts = self.series[value] = [0.0] * (len(self.bounds) + 2)
        counts[bisect_left(self.bounds, seconds)] += 1
        counts[-1] += seconds

    def describe(self) -> Iterator[Metric]:
        yield HistogramMetricFamily(self.name, self.documentation, labels=[self.label])

    def collect(self) -> Iterator[Metric]:
        family = HistogramMetricFamily(self.name, self.documentation, labels=[self.label])
        for value, counts in self.series.items():
            cumulative, buckets = 0.0, []
            for le, count in zip(self._les, counts, strict=False):
                cumulative += count
                buckets.append((le, cumulative))
            family.add_metric([value], buckets, sum_value=counts[-1])
        yield family
