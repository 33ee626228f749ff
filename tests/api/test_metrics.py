"""/metrics: Prometheus text after a scripted workload, with the right counts."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from _asgi import ADMIN_KEY, GraphQLClient, serving
from prometheus_client.parser import text_string_to_metric_families

REGISTER_BRAND = """mutation Register($input: RegisterBrandInput!) {
    registerBrand(input: $input) { apiKey brand { id } }
}"""
BRAND = "query BrandPage($id: ID!) { brand(id: $id) { name } }"
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[GraphQLClient]:
    async with serving(tmp_path) as served:
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
    # Each request reads its key (AP20); only the three of its own brand read it
    # (AP01): another brand's id is NOT_FOUND before any read.
    assert delta("proofgate_storage_calls_total", access_pattern="AP01", operation="GetItem") == 3
    assert delta("proofgate_storage_calls_total", access_pattern="AP20", operation="GetItem") == 5
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
