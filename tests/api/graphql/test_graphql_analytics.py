"""Brand.analytics and Product.analytics against the scans actually recorded."""

from __future__ import annotations

import itertools
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from services.context import Services

VERIFY = """mutation($code: String!, $scan: ScanInput) {
    verifyProduct(code: $code, scan: $scan) { result }
}"""
FIELDS = """daily { day scans } hourly { hour scans } topCountries(first: 10) { country scans }
    results { result scans } threatsByType { type alerts }"""
BRAND = f"""query($b: ID!, $from: Date!, $to: Date!) {{
    brand(id: $b) {{ stats {{ threatCount }} analytics(from: $from, to: $to) {{
        {FIELDS} statuses {{ status products }} }} }}
}}"""
PRODUCT = f"""query($p: ID!, $from: Date!, $to: Date!) {{
    product(id: $p) {{ analytics(from: $from, to: $to) {{ {FIELDS} }}
        scans(first: 100) {{ edges {{ node {{ country result scannedAt }} }} }} }}
}}"""
RECALL = 'mutation($p: ID!) { recallProduct(productId: $p, reason: "batch") { status } }'
COUNTRIES = ("DE", "FR", "US", "JP", "BR")
START = datetime(2026, 3, 9, 0, 30, tzinfo=UTC)


def services_of(gateway) -> Services:
    services: Services = gateway.app.state.graphql.services
    return services


def as_counts(entries: list[dict[str, Any]], key: str, value: str) -> dict[str, int]:
    return {entry[key]: entry[value] for entry in entries if entry[value]}


async def test_a_thousand_scans_over_five_countries_and_three_days(
    sqlite_gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    gateway = sqlite_gateway
    brand = await gateway.register_brand(credits=20)
    products = [await gateway.register_product(brand) for _ in range(10)]
    await gateway.data(RECALL, {"p": products[0]["id"]}, key=brand.key)
    services = services_of(gateway)
    expected_days: Counter[str] = Counter()
    expected_hours: Counter[int] = Counter()
    expected_countries: Counter[str] = Counter()
    clock = itertools.count()
    for index in range(1000):
        moment = START + timedelta(minutes=4 * next(clock))  # 1,000 x 4 min: about 2.8 days
        monkeypatch.setattr(services, "clock", lambda moment=moment: moment)
        country = COUNTRIES[index % 5]
        code = products[index % 10]["verificationCode"]
        await gateway.data(VERIFY, {"code": code, "scan": {"country": country}})
        expected_days[moment.date().isoformat()] += 1
        expected_hours[moment.hour] += 1
        expected_countries[country] += 1
    assert len(expected_days) == 3
    monkeypatch.undo()
    variables = {"b": brand.id, "from": "2026-03-09", "to": "2026-03-11"}
    body = await gateway.execute(BRAND, variables, key=brand.key, trace=True)
    calls = body["extensions"]["trace"]["calls"]
    assert len(calls) <= 3, calls
    data = body["data"]["brand"]
    analytics = data["analytics"]
    assert as_counts(analytics["daily"], "day", "scans") == dict(expected_days)
    assert as_counts(analytics["hourly"], "hour", "scans") == dict(expected_hours)
    assert len(analytics["hourly"]) == 24
    assert as_counts(analytics["topCountries"], "country", "scans") == dict(expected_countries)
    assert as_counts(analytics["results"], "result", "scans") == {
        "AUTHENTIC": 900,
        "SUSPICIOUS": 100,
    }
    assert as_counts(analytics["statuses"], "status", "products") == {"ACTIVE": 9, "RECALLED": 1}
    await _compare_with_recorded_scans(gateway, brand, products)


async def _compare_with_recorded_scans(gateway, brand, products: list[dict[str, Any]]) -> None:
    """Each product's counters against its own scan items (AP10), read back."""
    variables = {"from": "2026-03-09", "to": "2026-03-11"}
    for product in products:
        data = await gateway.data(PRODUCT, {"p": product["id"], **variables}, key=brand.key)
        nodes = [edge["node"] for edge in data["product"]["scans"]["edges"]]
        assert len(nodes) == 100
        analytics = data["product"]["analytics"]
        recorded_days = Counter(node["scannedAt"][:10] for node in nodes)
        assert as_counts(analytics["daily"], "day", "scans") == dict(recorded_days)
        recorded_countries = Counter(node["country"] for node in nodes)
        assert as_counts(analytics["topCountries"], "country", "scans") == dict(recorded_countries)
        recorded_results = Counter(node["result"] for node in nodes)
        assert as_counts(analytics["results"], "result", "scans") == dict(recorded_results)


ALERT_PATIENCE = 20.0
"""Seconds to wait for the relay's alert before the assertion says it never came."""


async def test_threats_by_type_count_the_alerts_raised(gateway) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    for country in ("DE", "FR", "US"):
        await gateway.data(
            VERIFY, {"code": product["verificationCode"], "scan": {"country": country}}
        )
    today = datetime.now(UTC).date().isoformat()
    variables = {"b": brand.id, "from": today, "to": today}
    # In the full suite the one moto server answers every worker's tables and
    # was seen to stall for seconds: the wait is for the relay to finish.
    await gateway.drained(timeout=ALERT_PATIENCE)
    data = (await gateway.data(BRAND, variables, key=brand.key))["brand"]
    alerts = as_counts(data["analytics"]["threatsByType"], "type", "alerts")
    assert alerts == {"GEOGRAPHIC_ANOMALY": 1}, await _relay_state(gateway)
    assert sum(alerts.values()) == data["stats"]["threatCount"]


async def _relay_state(gateway) -> str:
    """What the relay holds when an alert is late, so a failure says whether
    an outbox item was left waiting (the backlog) or the store was slow."""
    pipeline = services_of(gateway).pipeline
    assert pipeline is not None
    relay = pipeline.relay
    return (
        f"backlog {await pipeline.backlog()}, alerts created {relay.alerts.created}, "
        f"pressure {relay.pressure()}"
    )


async def test_bad_ranges_and_other_brands_read_nothing(sqlite_gateway) -> None:
    gateway = sqlite_gateway
    brand = await gateway.register_brand()
    other = await gateway.register_brand()
    too_long = {"b": brand.id, "from": "2026-01-01", "to": "2026-04-03"}
    body = await gateway.execute(BRAND, too_long, key=brand.key, trace=True)
    assert gateway.codes(body) == ["BAD_USER_INPUT"]
    assert [c["accessPattern"] for c in body["extensions"]["trace"]["calls"]] == ["AP01", "AP03"]
    reversed_range = {"b": brand.id, "from": "2026-01-02", "to": "2026-01-01"}
    assert gateway.codes(await gateway.execute(BRAND, reversed_range, key=brand.key)) == [
        "BAD_USER_INPUT"
    ]
    foreign = {"b": brand.id, "from": "2026-01-01", "to": "2026-01-02"}
    assert gateway.codes(await gateway.execute(BRAND, foreign, key=other.key)) == ["NOT_FOUND"]
