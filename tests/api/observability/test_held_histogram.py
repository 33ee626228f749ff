"""The held latency histogram scrapes as prometheus_client's own histogram."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, Histogram, generate_latest

from api.observability.held_histogram import HeldHistogram
from api.observability.metrics import LATENCY_BUCKETS

EDGES = [0.0, *LATENCY_BUCKETS, 10.000001, 1e9, 0.0049999, 0.0050001]


def _exposed(observations: list[tuple[str, float]]) -> tuple[bytes, bytes]:
    library, held = CollectorRegistry(), CollectorRegistry()
    histogram = Histogram(
        "latency_seconds", "Time", ["type"], buckets=LATENCY_BUCKETS, registry=library
    )
    ours = HeldHistogram("latency_seconds", "Time", "type", LATENCY_BUCKETS, held)
    for label, seconds in observations:
        histogram.labels(label).observe(seconds)
        ours.observe(label, seconds)
    return generate_latest(library), generate_latest(held)


def test_bucket_bounds_and_the_sum_scrape_alike() -> None:
    library, held = _exposed([(kind, edge) for kind in ("query", "mutation") for edge in EDGES])
    assert held == library
    assert b'latency_seconds_bucket{le="0.005",type="query"} 3.0' in held


def test_nothing_observed_scrapes_alike() -> None:
    library, held = _exposed([])
    assert held == library


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["query", "mutation", "none"]),
            st.floats(min_value=0, max_value=100, allow_nan=False) | st.sampled_from(EDGES),
        ),
        max_size=40,
    )
)
def test_any_observations_scrape_alike(observations: list[tuple[str, float]]) -> None:
    library, held = _exposed(observations)
    assert held == library
