"""/metrics: Prometheus text after a scripted workload, with the right counts."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from _asgi import ADMIN_KEY, GraphQLClient, serving
from prometheus_client.parser import text_string_to_metric_families

from api.observability.metrics import Metrics
from domain.identifiers import new_id
from services.pipeline import RecallEvent, outbox_actions
from services.pipeline.outbox.items import due_sort, park_update
from services.webhooks.items import DeliveryStatus

REGISTER_BRAND = """mutation Register($input: RegisterBrandInput!) {
    registerBrand(input: $input) { apiKey brand { id } }
}"""
BRAND = "query BrandPage($id: ID!) { brand(id: $id) { name } }"
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[GraphQLClient]:
    # Every request reads its key (the key cache off), so the AP20 count below
    # is the requests' count whatever the test's timing (README, PROOFGATE_KEY_CACHE_MS).
    async with serving(tmp_path, PROOFGATE_KEY_CACHE_MS="0") as served:
        yield served


async def scrape(client: GraphQLClient) -> Samples:
    response = await client.http.get("/metrics", headers={"Authorization": f"Bearer {ADMIN_KEY}"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=")
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


@pytest.mark.storage_calls
async def test_a_workload_shows_up_with_its_counts(client: GraphQLClient) -> None:
    before = await scrape(client)
    created = await client.data(
        REGISTER_BRAND,
        {"input": {"name": "Acme", "domain": "acme.example", "industry": "Tools"}},
        key=ADMIN_KEY,
    )
    brand_key, brand_id = (
        created["registerBrand"]["apiKey"],
        created["registerBrand"]["brand"]["id"],
    )
    for _ in range(3):
        await client.data(BRAND, {"id": brand_id}, key=brand_key)
    missing = await client.execute(BRAND, {"id": "01J00000000000000000000000"}, key=brand_key)
    assert client.codes(missing) == ["NOT_FOUND"]
    refused = await client.post("{ __typename }", key="not-a-key")
    assert refused.status_code == 401
    after = await scrape(client)

    def delta(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert (
        delta("proofgate_requests_total", operation="Register", type="mutation", outcome="ok") == 1
    )
    assert delta("proofgate_requests_total", operation="BrandPage", type="query", outcome="ok") == 3
    assert (
        delta("proofgate_requests_total", operation="BrandPage", type="query", outcome="error") == 1
    )
    assert (
        delta("proofgate_requests_total", operation="anonymous", type="none", outcome="refused")
        == 1
    )
    assert delta("proofgate_errors_total", code="NOT_FOUND") == 1
    assert delta("proofgate_errors_total", code="UNAUTHENTICATED") == 1
    assert delta("proofgate_request_duration_seconds_count", type="query") == 4
    # The wrong key is read (AP20); the brand's key at least once, and again
    # for each of its four requests the key cache (100 ms) no longer holds it.
    # Only the three of its own brand read it (AP01): another brand's id is
    # NOT_FOUND before any read.
    assert delta("proofgate_storage_calls_total", access_pattern="AP01", operation="GetItem") == 3
    assert (
        2 <= delta("proofgate_storage_calls_total", access_pattern="AP20", operation="GetItem") <= 5
    )
    assert delta("proofgate_storage_capacity_units_total", access_pattern="AP01") > 0
    assert value(after, "proofgate_websocket_connections") == 0


async def test_metrics_need_the_admin_key(client: GraphQLClient) -> None:
    anonymous = await client.http.get("/metrics")
    assert anonymous.status_code == 403
    assert client.codes(anonymous.json()) == ["FORBIDDEN"]
    wrong = await client.http.get("/metrics", headers={"Authorization": "Bearer wrong-key"})
    assert wrong.status_code == 401


async def test_operation_names_cannot_grow_the_series_without_bound(client: GraphQLClient) -> None:
    metrics = client.app.state.metrics
    limit = metrics._max_names
    for n in range(limit + 20):
        await client.data(f"query Name{n} {{ __typename }}")
    samples = await scrape(client)
    names = {
        dict(labels)["operation"]
        for (name, labels) in samples
        if name == "proofgate_requests_total"
    }
    assert len(names) <= limit + 2  # the first ``limit`` names, "other", "anonymous"
    assert (
        value(samples, "proofgate_requests_total", operation="other", type="query", outcome="ok")
        >= 20
    )


async def test_pipeline_series_show_backlog_parked_lag_and_subscriptions(
    client: GraphQLClient,
) -> None:
    """With the relay stopped, three recalls due ten minutes ago wait in the
    outbox and one of them is parked; one live subscription is open."""
    pipeline = client.app.state.pipeline
    storage = client.app.state.storage
    await pipeline.stop()
    before = await scrape(client)
    assert value(before, "proofgate_outbox_queued") == 0
    assert value(before, "proofgate_relay_lag_seconds") == 0
    now = datetime.now(UTC)
    due = now - timedelta(minutes=10)
    events = [RecallEvent(new_id(), new_id(), now) for _ in range(3)]
    for event in events:
        await storage.transact_write(outbox_actions(event, pipeline.settings, now=due))
    first = events[0].event_id
    await storage.transact_write(
        [park_update(first, now=now, error="x", sort=due_sort(due, first))]
    )
    subscriber = pipeline.broker.add(new_id())
    try:
        after = await scrape(client)
    finally:
        pipeline.broker.remove(subscriber)
    assert value(after, "proofgate_outbox_queued") == 2
    assert value(after, "proofgate_outbox_parked") == 1
    assert 600 <= value(after, "proofgate_relay_lag_seconds") < 660
    assert value(after, "proofgate_subscriptions") == 1


def test_webhook_deliveries_are_counted_by_result() -> None:
    metrics = Metrics()
    for result in (DeliveryStatus.RETRYING, DeliveryStatus.RETRYING, DeliveryStatus.DELIVERED):
        metrics.delivered(result)
    samples = {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(metrics.render().decode())
        for sample in family.samples
    }
    assert value(samples, "proofgate_webhook_deliveries_total", result="RETRYING") == 2
    assert value(samples, "proofgate_webhook_deliveries_total", result="DELIVERED") == 1
    assert value(samples, "proofgate_webhook_deliveries_total", result="FAILED") == 0


async def test_the_relays_pressure_counts_are_scraped(client: GraphQLClient) -> None:
    """Deferred hints, lapsed leases and late commits, as the relay counts them."""
    relay = client.app.state.pipeline.relay
    before = await scrape(client)
    assert value(before, "proofgate_relay_items", event="lapsed") == 0
    relay.lapsed += 2
    relay.alerts.stamper.late += 1
    after = await scrape(client)
    assert value(after, "proofgate_relay_items", event="lapsed") == 2
    assert value(after, "proofgate_relay_items", event="late") == 1
    assert value(after, "proofgate_relay_items", event="deferred") == relay.deferred
    assert value(after, "proofgate_relay_items", event="stranded") == 0
