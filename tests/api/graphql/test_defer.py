"""@defer over multipart HTTP: the initial part first, then the deferred one,
both inside the operation's cost and response byte budget."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from _asgi import ADMIN_KEY, GraphQLClient, serving

pytestmark = pytest.mark.fast_paths

ACCEPT_PARTS = "multipart/mixed;deferSpec=20220824,application/json"
NAME = "N" * 100
_PART = re.compile(rb"Content-Length: (\d+)\r\n\r\n")


def parts(response: httpx.Response) -> list[dict[str, Any]]:
    """The JSON parts of a multipart response, in the order they were sent."""
    assert response.headers["content-type"].startswith("multipart/mixed"), response.text
    body, found = response.content, []
    for match in _PART.finditer(body):
        start = match.end()
        found.append(json.loads(body[start : start + int(match.group(1))]))
    return found


def aliases(count: int, start: int = 0) -> str:
    return " ".join(f"n{i}: name" for i in range(start, start + count))


@pytest.fixture(scope="module")
async def small_budget(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[GraphQLClient]:
    """Room for about nine brand names of JSON, and a cost budget of two reads."""
    async with serving(
        tmp_path_factory.mktemp("defer"),
        PROOFGATE_MAX_RESPONSE_BYTES="1000",
        PROOFGATE_MAX_COST="2",
    ) as gateway:
        yield gateway


async def brand(gateway: GraphQLClient) -> tuple[str, str]:
    data = await gateway.data(
        """mutation($input: RegisterBrandInput!) {
            registerBrand(input: $input) { apiKey brand { id } }
        }""",
        {"input": {"name": NAME, "domain": f"{uuid.uuid4().hex[:8]}.example.com"}},
        key=ADMIN_KEY,
    )
    return data["registerBrand"]["brand"]["id"], data["registerBrand"]["apiKey"]


async def deferred(
    gateway: GraphQLClient, query: str, brand_id: str, key: str, *, accept: str = ACCEPT_PARTS
) -> httpx.Response:
    return await gateway.post(
        query, {"id": brand_id}, key=key, trace=True, headers={"Accept": accept}
    )


async def test_the_initial_part_comes_before_the_deferred_one(
    small_budget: GraphQLClient,
) -> None:
    brand_id, key = await brand(small_budget)
    query = """query($id: ID!) {
        brand(id: $id) { id ... @defer(label: "stats") { stats { threatCount } } }
    }"""
    initial, rest = parts(await deferred(small_budget, query, brand_id, key))
    assert initial["data"] == {"brand": {"id": brand_id}}
    assert initial["hasNext"] is True
    assert initial["pending"] == [{"id": "0", "path": ["brand"], "label": "stats"}]
    assert initial["extensions"]["trace"]["execution"] == "graphql-core"
    assert rest["hasNext"] is False
    assert rest["incremental"] == [
        {"data": {"stats": {"threatCount": 0}}, "id": "0", "path": ["brand"], "label": "stats"}
    ]
    # The same fields undeferred: one answer, on the compiled plan.
    whole = await small_budget.execute(
        query.replace('... @defer(label: "stats")', "..."), {"id": brand_id}, key=key, trace=True
    )
    assert whole["data"] == {"brand": {"id": brand_id, "stats": {"threatCount": 0}}}
    assert whole["extensions"]["trace"]["execution"] == "compiled"


async def test_cost_counts_the_deferred_fields(small_budget: GraphQLClient) -> None:
    brand_id, key = await brand(small_budget)
    within = """query($id: ID!) { brand(id: $id) { id ... @defer { stats { threatCount } } } }"""
    initial, _ = parts(await deferred(small_budget, within, brand_id, key))
    # the brand, and its stats item (deferred)
    assert initial["extensions"]["cost"]["requestedQueryCost"] == 2
    # A third read, deferred, takes it over the budget of two: refused whole.
    over = """query($id: ID!) { brand(id: $id) { id ... @defer {
        stats { threatCount } threats(first: 1) { edges { node { id } } } } } }"""
    refused = await deferred(small_budget, over, brand_id, key)
    assert refused.status_code == 200
    assert small_budget.codes(refused.json()) == ["QUERY_TOO_COMPLEX"]


async def test_the_byte_budget_counts_every_increment(small_budget: GraphQLClient) -> None:
    """Six names (about 650 bytes) fit each part, and the budget of 1000
    bytes; six more deferred take the operation past it, though the deferred
    part alone would fit."""
    brand_id, key = await brand(small_budget)
    query = "query($id: ID!) { brand(id: $id) { %s ... @defer { %s } } }"
    fits = query % (aliases(6), aliases(6, 6))
    fitting = await deferred(small_budget, fits.replace(aliases(6), "id", 1), brand_id, key)
    assert [len(part.get("incremental", [{}])[0].get("data", {})) for part in parts(fitting)][
        1
    ] == 6
    initial, rest = parts(await deferred(small_budget, fits, brand_id, key))
    assert initial["data"]["brand"] == {f"n{i}": NAME for i in range(6)}
    assert "incremental" not in rest
    (completed,) = rest["completed"]
    assert [error["extensions"]["code"] for error in completed["errors"]] == ["QUERY_TOO_COMPLEX"]


async def test_a_client_that_does_not_accept_parts_is_told_how(
    small_budget: GraphQLClient,
) -> None:
    brand_id, key = await brand(small_budget)
    query = """query($id: ID!) { brand(id: $id) { id ... @defer { name } } }"""
    refused = await deferred(small_budget, query, brand_id, key, accept="application/json")
    assert refused.status_code == 406
    assert small_budget.codes(refused.json()) == ["BAD_USER_INPUT"]
    assert "multipart/mixed" in refused.json()["errors"][0]["extensions"]["hint"]


async def test_the_read_budget_counts_every_increment(tmp_path: Path) -> None:
    """One item per request: the brand; its deferred stats would be a second."""
    async with serving(tmp_path, PROOFGATE_MAX_READ_ITEMS="1") as gateway:
        brand_id, key = await brand(gateway)
        query = """query($id: ID!) { brand(id: $id) { id ... @defer { stats { threatCount } } } }"""
        initial, rest = parts(await deferred(gateway, query, brand_id, key))
        assert initial["data"] == {"brand": {"id": brand_id}}
        (completed,) = rest["completed"]
        assert [error["extensions"]["code"] for error in completed["errors"]] == [
            "QUERY_TOO_COMPLEX"
        ]
        assert completed["errors"][0]["extensions"]["maxReadItems"] == 1


async def test_stream_sends_a_lists_items_after_the_initial_part(tmp_path: Path) -> None:
    async with serving(tmp_path) as gateway:
        brand_id, key = await brand(gateway)
        for name in ("first", "second"):
            await gateway.data(
                "mutation($input: RegisterProductInput!) { registerProduct(input: $input) { id } }",
                {"input": {"brandId": brand_id, "name": name}},
                key=key,
            )
        query = """query($id: ID!) { brand(id: $id) {
            products(first: 2) { edges @stream(initialCount: 1) { node { name } } } } }"""
        initial, *rest = parts(await deferred(gateway, query, brand_id, key))
    (first,) = initial["data"]["brand"]["products"]["edges"]
    assert initial["hasNext"] is True
    streamed = [
        item for part in rest for entry in part.get("incremental", []) for item in entry["items"]
    ]
    assert sorted(edge["node"]["name"] for edge in [first, *streamed]) == ["first", "second"]
    assert rest[-1]["hasNext"] is False
