"""In-process: matching one alert against 10,000 live filtered subscriptions.

The broker of one process holds 10,000 subscriptions of one brand (the
per-process cap), each with a filter of the kind partners send: most name a
few of the brand's 20,000 products, some also countries or types, some only
countries or a minimum severity. Each alert is published as the relay
publishes it; the time is ``Broker.publish`` until every matching
subscriber has it queued (docs/design.md, Alert filters). The second row is
what the broker did before filters were indexed, for comparison: every
subscription checked in turn.
"""

from __future__ import annotations

import gc
import random
from datetime import UTC, datetime, timedelta

from domain.datetimes import format_datetime
from domain.enums import Severity, ThreatType
from domain.identifiers import make_id
from domain.threats.filters import AlertFilter
from services.pipeline import Broker, SubscriptionLimits
from services.pipeline.alerts.records import alert_facts
from storage import Item

from ._harness import Result, measure_sync, print_table

__all__ = ["run"]

SUBSCRIPTIONS = 10_000
PRODUCTS = 20_000
ALERTS = 5_000
BRAND = "B1"
COUNTRIES = ["DE", "FR", "US", "JP", "BR", "IT", "ES", "GB", "CN", "IN"]
T0 = datetime(2026, 3, 10, tzinfo=UTC)


def _filter(rng: random.Random, products: list[str]) -> AlertFilter:
    kind = rng.random()
    if kind < 0.7:
        return AlertFilter(
            product_ids=frozenset(rng.sample(products, rng.randint(1, 20))),
            countries=frozenset(rng.sample(COUNTRIES, 3)) if rng.random() < 0.3 else None,
            types=frozenset(rng.sample(list(ThreatType), 3)) if rng.random() < 0.3 else None,
        )
    if kind < 0.9:
        return AlertFilter(countries=frozenset(rng.sample(COUNTRIES, 2)))
    return AlertFilter(severities=frozenset({Severity.CRITICAL}))


def _alert(rng: random.Random, products: list[str], n: int) -> Item:
    kind = rng.choice(list(ThreatType))
    return {
        "id": f"a{n}",
        "brandId": BRAND,
        "productId": rng.choice(products),
        "country": rng.choice([*COUNTRIES, None]),
        "type": kind.value,
        "severity": rng.choice(list(Severity)).value,
        "recordedAt": format_datetime(T0 + timedelta(milliseconds=n)),
    }


async def run() -> None:
    rng = random.Random(36)
    products = [make_id(T0, n.to_bytes(10, "big")) for n in range(PRODUCTS)]
    broker = Broker(
        queue_max=ALERTS,
        limits=SubscriptionLimits(
            per_process=SUBSCRIPTIONS, per_brand=SUBSCRIPTIONS, filter_values_per_brand=10**6
        ),
        overlap=timedelta(seconds=10),
    )
    filters = [_filter(rng, products) for _ in range(SUBSCRIPTIONS)]
    for alert_filter in filters:
        broker.add(BRAND, alert_filter=alert_filter)
    broker.mark_seen(BRAND, [], T0)
    alerts = [_alert(rng, products, n) for n in range(ALERTS + 200)]
    # As a served process does after start-up (api/runtime/gc_freeze.py): the
    # subscriptions and filters are not scanned by every collection.
    gc.collect()
    gc.freeze()
    indexed = measure_sync("index (Broker.publish)", lambda i: broker.publish(alerts[i]), ALERTS)

    def loop(i: int) -> int:
        facts = alert_facts(alerts[i])
        return sum(1 for f in filters if f.matches(facts))

    looped = measure_sync("loop over every filter (before)", loop, ALERTS // 10)
    matched = sum(loop(i) for i in range(ALERTS)) / ALERTS
    rows = [_row(r, matched) for r in (indexed, looped)]
    gc.unfreeze()
    print_table(
        f"Alert filters: one alert against {SUBSCRIPTIONS:,} filtered subscriptions",
        rows,
        ("path", "alerts/s", "p50 us", "p99 us", "subscribers matched (mean)"),
    )


def _row(result: Result, matched: float) -> tuple[str, ...]:
    return (
        result.name,
        f"{result.ops_per_second:,.0f}",
        f"{result.p50_us:,.1f}",
        f"{result.p99_us:,.1f}",
        f"{matched:,.1f}",
    )
