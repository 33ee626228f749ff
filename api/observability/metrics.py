"""Prometheus metrics of one gateway process, served on ``/metrics``.

Every label set is bounded: operation names are the client's to choose, so
besides the registered operations only the first ``max_operation_names``
distinct names sent with a key get a series of their own, and the rest
(every unregistered name an anonymous client sends) count as ``other``;
access patterns, routes and error codes come from closed sets. Scraping
needs the admin key (Prometheus' ``authorization`` setting), because
operation names are another tenant's business.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
    multiprocess,
)
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from api.observability.cache_metrics import CacheSeries
from api.observability.held_histogram import HeldHistogram
from api.observability.observation import Observation
from api.observability.response_cache_metrics import ResponseCacheSeries
from services.pipeline import BACKLOG_COUNT_MAX, Backlog

__all__ = [
    "CONTENT_TYPE_LATEST",
    "MULTIPROCESS_DIR",
    "OTHER_OPERATION",
    "SHARED_REFRESH_SECONDS",
    "Metrics",
]

SHARED_REFRESH_SECONDS = 1.0
"""With several processes, how old another process's gauges may be in a
scrape: a worker holding WebSockets may answer no request for hours, and the
scrape, answered by whichever worker accepts it, must still count that
worker's subscriptions."""

FastPathCounts = tuple[Callable[[], Mapping[tuple[str, str], int]], Callable[[], Mapping[str, int]]]

MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"
"""Set (by ``serve --workers``) when several processes serve one port: every
process writes its counts there and any of them answers for all."""

OTHER_OPERATION = "other"
ANONYMOUS_OPERATION = "anonymous"
MAX_OPERATION_NAME = 64
_ANONYMOUS_ROLE = "ANONYMOUS"
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

# A ``_created`` gauge per series doubles the scrape for a fact Prometheus
# derives from the counter's resets.
disable_created_metrics()  # type: ignore[no-untyped-call]


class Metrics:
    def __init__(self, *, max_operation_names: int = 100, registered: Iterable[str] = ()) -> None:
        """``registered``: the operation registry's names, which always have a series."""
        self.registry = CollectorRegistry()
        self._shared = bool(os.environ.get(MULTIPROCESS_DIR))
        self._count_websockets: Callable[[], int] | None = None
        self._max_names = max_operation_names
        self._names: set[str] = set()
        self._registered = frozenset(registered)
        self._children: dict[tuple[int, tuple[str, ...]], Any] = {}
        self._pending: dict[tuple[Any, tuple[str, ...]], float] = {}
        self.requests = Counter(
            "proofgate_requests",
            "GraphQL requests by operation name, operation type and outcome "
            "(ok, error: answered with errors, refused: 4xx/5xx)",
            ["operation", "type", "outcome"],
            registry=self.registry,
        )
        self.latency = self._latency(
            "proofgate_request_duration_seconds",
            "Time to answer a GraphQL request, by operation type",
            "type",
        )
        self.errors = Counter(
            "proofgate_errors", "Errors answered, by code", ["code"], registry=self.registry
        )
        self.storage_calls = Counter(
            "proofgate_storage_calls",
            "Storage calls made while answering requests, by access pattern and operation",
            ["access_pattern", "operation"],
            registry=self.registry,
        )
        self.capacity = Counter(
            "proofgate_storage_capacity_units",
            "Capacity units consumed while answering requests, by access pattern",
            ["access_pattern"],
            registry=self.registry,
        )
        self.websockets = Gauge(
            "proofgate_websocket_connections",
            "Open GraphQL WebSocket connections and HTTP streams (multipart, SSE)",
            registry=self.registry,
            multiprocess_mode="livesum",
        )
        self._pipeline_series()
        self._gateway_series()
        self.cache = CacheSeries(self.registry)
        self.response_cache = ResponseCacheSeries(self.registry)
        self._count_subscriptions: Callable[[], int] | None = None
        self._count_relay: Callable[[], Mapping[str, int]] | None = None

    def _latency(self, name: str, documentation: str, label: str) -> HeldHistogram | Histogram:
        """Held in process (``held_histogram.py``) unless several processes
        share the counts, which prometheus_client's own histogram writes."""
        if not self._shared:
            return HeldHistogram(name, documentation, label, LATENCY_BUCKETS, self.registry)
        return Histogram(
            name, documentation, [label], buckets=LATENCY_BUCKETS, registry=self.registry
        )

    def _observe_latency(
        self, histogram: HeldHistogram | Histogram, value: str, seconds: float
    ) -> None:
        if type(histogram) is HeldHistogram:
            histogram.observe(value, seconds)
        else:
            self._series(histogram, value).observe(seconds)

    def always_count(self, names: Iterable[str]) -> None:
        """The operation registry's names, known once the schema that checks
        them is built (after the metrics it reports outages to)."""
        self._registered = frozenset(names)

    def _gateway_series(self) -> None:
        self.route_requests = Counter(
            "proofgate_route_requests",
            "Requests to the routes other than /graphql (/mcp, /ingest, /dpp, /qr, /verify, /01) "
            "by route and outcome (ok, error, refused: 4xx/5xx)",
            ["route", "outcome"],
            registry=self.registry,
        )
        self.route_latency = self._latency(
            "proofgate_route_request_duration_seconds",
            "Time to answer a request to a route other than /graphql, by route",
            "route",
        )
        self.redis_outages = Counter(
            "proofgate_redis_outages",
            "Times Redis became unreachable, by what fell back: alerts (to the table "
            "tail) or limits (rate limits and persisted queries, to per-process state)",
            ["part"],
            registry=self.registry,
        )
        self.fallbacks = Counter(
            "proofgate_fast_path_fallbacks",
            "Requests, pages or values a fast path left to the library path it mirrors, "
            "by lane (entry, prepared, plan, fused, projection, fanout, protocol, "
            "keepalive) and cause "
            "(docs/design.md, Fast paths and their switches)",
            ["lane", "cause"],
            registry=self.registry,
        )
        self.taken = Counter(
            "proofgate_fast_path_taken",
            "Pages a fast path wrote itself, by lane (projection), and subscriptions "
            "the direct fan-out started (fanout)",
            ["lane"],
            registry=self.registry,
        )
        self._fallbacks_seen: dict[tuple[str, ...], int] = {}
        self._fast_paths: FastPathCounts | None = None
        self.untrusted_documents = Counter(
            "proofgate_untrusted_documents",
            "Documents outside the operation registry that ran "
            "(PROOFGATE_TRUSTED_DOCUMENTS=log: what enforce would refuse)",
            registry=self.registry,
        )

    def _pipeline_series(self) -> None:
        self.subscriptions = Gauge(
            "proofgate_subscriptions",
            "Live threatAlerts subscriptions",
            registry=self.registry,
            multiprocess_mode="livesum",
        )
        self.deliveries = Counter(
            "proofgate_webhook_deliveries",
            "Webhook delivery attempts by result (DELIVERED, RETRYING, FAILED)",
            ["result"],
            registry=self.registry,
        )
        # The outbox is the store's, not a process's: every process measures
        # the same queue, so the latest measurement is the value.
        self.outbox_queued = Gauge(
            "proofgate_outbox_queued",
            f"Outbox items waiting or leased (counted up to {BACKLOG_COUNT_MAX})",
            registry=self.registry,
            multiprocess_mode="mostrecent",
        )
        self.outbox_parked = Gauge(
            "proofgate_outbox_parked",
            f"Outbox items parked after their last attempt (up to {BACKLOG_COUNT_MAX})",
            registry=self.registry,
            multiprocess_mode="mostrecent",
        )
        self.relay_items = Gauge(
            "proofgate_relay_items",
            "Since start, by event: deferred (committed items left to the poll because "
            "the relay was full), lapsed (claimed items whose lease ended before they "
            "were worked: should stay 0), late (alerts moved forward after a slow "
            "commit), stranded (late alerts that could not be moved)",
            ["event"],
            registry=self.registry,
            multiprocess_mode="livesum",
        )
        self.relay_lag = Gauge(
            "proofgate_relay_lag_seconds",
            "How long the oldest claimable outbox item has been due",
            registry=self.registry,
            multiprocess_mode="mostrecent",
        )

    def redis_outage(self, part: str) -> Callable[[], None]:
        """What a Redis user calls when it falls back; ``part`` is a fixed name."""
        counter = self.redis_outages.labels(part)
        return counter.inc

    def count_websockets(self, count: Callable[[], int]) -> None:
        """Read at scrape time in one process; with several, each process
        refreshes its own count on every request it answers."""
        if self._shared:
            self._count_websockets = count
        else:
            self.websockets.set_function(count)

    def count_subscriptions(self, count: Callable[[], int]) -> None:
        """Like ``count_websockets``."""
        if self._shared:
            self._count_subscriptions = count
        else:
            self.subscriptions.set_function(count)

    def count_fast_paths(self, counts: FastPathCounts) -> None:
        """The process's fast-path totals (``api/observability/fallbacks.py``:
        fallbacks by lane and cause, pages taken by lane), read when the held
        increments are."""
        self._fast_paths = counts

    def count_relay(self, counts: Callable[[], Mapping[str, int]]) -> None:
        """The relay's own counts, read when scraped or, with several
        processes, on every request (docs/design.md, "Relay backpressure")."""
        self._count_relay = counts

    def delivered(self, result: str) -> None:
        self.deliveries.labels(result).inc()

    def observe_backlog(self, backlog: Backlog) -> None:
        self.outbox_queued.set(backlog.queued)
        self.outbox_parked.set(backlog.parked)
        self.relay_lag.set(backlog.lag_seconds)

    def observe(self, observation: Observation, status: int, seconds: float) -> None:
        """A /graphql request: ``_count`` and ``_observe_latency`` inline, and
        ``_observe_outcome`` called only when it has something to count (a
        call apiece on every request)."""
        kind = observation.operation_type or "none"
        operation = self._operation(observation.operation_name, observation.principal)
        codes = observation.error_codes
        key = (self.requests, (operation, kind, _outcome(observation, status)))
        pending = self._pending
        pending[key] = pending.get(key, 0) + 1
        latency = self.latency
        if type(latency) is HeldHistogram:
            latency.observe(kind, seconds)
        else:
            self._series(latency, kind).observe(seconds)
        if codes or observation.storage.calls or self._shared:
            self._observe_outcome(observation)

    def observe_route(
        self, route: str, observation: Observation, status: int, seconds: float
    ) -> None:
        """A request to a route other than /graphql (``observed_route``: a closed set)."""
        self._count(self.route_requests, (route, _outcome(observation, status)))
        self._observe_latency(self.route_latency, route, seconds)
        self._observe_outcome(observation)

    def _observe_outcome(self, observation: Observation) -> None:
        """What every request counts, on /graphql and the other routes alike:
        its error codes and its storage calls."""
        count = self._count
        for code in observation.error_codes:
            count(self.errors, (code,))
        for call in observation.storage.calls:
            pattern = call.access_pattern or "none"
            count(self.storage_calls, (pattern, call.operation))
            count(self.capacity, (pattern,), call.capacity)
        if self._shared:
            self._flush()
            self._refresh_counts()

    def _count(self, counter: Any, labels: tuple[str, ...], amount: float = 1) -> None:
        """A counter's increment, held until the next scrape (``_flush``): a
        request's increments cost a dict update each rather than a labelled
        child's ``inc`` under its lock (~1 us each, ten a verification). The
        held series are bounded as the counters' are, by their label sets."""
        key = (counter, labels)
        pending = self._pending
        pending[key] = pending.get(key, 0) + amount

    def _flush(self) -> None:
        """The held increments, into the counters: before a scrape, and with
        several processes after every request, whose counts the other
        processes read from the shared directory."""
        pending, self._pending = self._pending, {}
        for (counter, labels), amount in pending.items():
            self._series(counter, *labels).inc(amount)
        if self._fast_paths is not None:
            fallbacks, taken = self._fast_paths
            self._catch_up(self.fallbacks, "fallbacks", fallbacks().items())
            by_lane = (((lane,), n) for lane, n in taken().items())
            self._catch_up(self.taken, "taken", by_lane)

    def _catch_up(
        self, counter: Any, name: str, totals: Iterable[tuple[tuple[str, ...], int]]
    ) -> None:
        """The process's fast-path totals (``fallbacks.py``) since this
        ``Metrics`` last looked."""
        seen = self._fallbacks_seen
        for labels, count in tuple(totals):
            key = (name, *labels)
            if count != seen.get(key, 0):
                self._series(counter, *labels).inc(count - seen.get(key, 0))
                seen[key] = count

    def _series(self, metric: Any, *labels: str) -> Any:
        """``metric.labels(*labels)``, remembered: the label values here come
        from bounded sets (operation names, kinds, access patterns), and
        ``labels`` costs more than the increment it is for."""
        key = (id(metric), labels)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*labels)
        return child

    def render(self) -> bytes:
        self._flush()
        self._refresh_relay()
        self.cache.refresh()
        self.response_cache.refresh()
        if not self._shared:
            return generate_latest(self.registry)
        self._refresh_counts()
        every_process = CollectorRegistry()
        multiprocess.MultiProcessCollector(every_process)  # type: ignore[no-untyped-call]
        return generate_latest(every_process)

    @property
    def shared(self) -> bool:
        """Several processes serve one port and write their counts to one directory."""
        return self._shared

    async def refresh(self) -> None:
        """This process's gauges, written for the scrape whichever process
        answers it (``api/app.py`` calls it every ``SHARED_REFRESH_SECONDS``
        when ``shared``)."""
        self._refresh_counts()

    def _refresh_relay(self) -> None:
        if self._count_relay is not None:
            for event, count in self._count_relay().items():
                self.relay_items.labels(event).set(count)

    def _refresh_counts(self) -> None:
        self._refresh_relay()
        self.cache.refresh()
        if self._count_websockets is not None:
            self.websockets.set(self._count_websockets())
        if self._count_subscriptions is not None:
            self.subscriptions.set(self._count_subscriptions())

    def _operation(self, name: str | None, principal: str | None) -> str:
        """Registered operations always have their series; the remaining
        slots are first come, but only for callers with a key, so an
        anonymous client cannot take them all (its other names are ``other``)."""
        if not name:
            return ANONYMOUS_OPERATION
        if name in self._registered:
            return name
        name = name[:MAX_OPERATION_NAME]
        if name in self._names:
            return name
        if principal in (None, _ANONYMOUS_ROLE):
            return OTHER_OPERATION
        if len(self._names) < self._max_names:
            self._names.add(name)
            return name
        return OTHER_OPERATION


def _outcome(observation: Observation, status: int) -> str:
    if status >= 400:
        return "refused"
    return "error" if observation.error_codes else "ok"
