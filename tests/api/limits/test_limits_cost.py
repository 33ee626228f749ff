"""The cost budget and ``first``: computed before execution, and over the
limit nothing runs (the trace shows no storage call where the same shape
under the limit makes some)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from _asgi import codes
from _limits import ADMIN_KEY, Client, serve
from graphql import parse

from api.graphql.schema import build_schema, schema
from api.limits.cost import cost_model
from api.settings.limits import MAX_COST, Limits
from domain.analytics import BRAND_SHARDS
from resolvers.threats.paging import SCAN_MAX_ITEMS
from services.provenance.walk import CHAIN_READ_ITEMS
from storage.sqlite import open_sqlite
from tests._support.contexts import request_context

BRANDS_AND_PRODUCTS = """query($brands: Int, $products: Int) {
    brands(first: $brands) {
        edges { node { id products(first: $products) { edges { node { id } } } } }
    }
}"""


@pytest.fixture(scope="module")
async def client() -> AsyncIterator[Client]:
    async with serve() as client:
        yield client


def storage_calls(body: dict[str, Any]) -> int:
    calls: int = body["extensions"]["trace"]["storageCalls"]
    return calls


@pytest.mark.parametrize(
    ("query", "variables", "cost"),
    [
        # 10 brand index entries + 10 brands, then 10 pages of 50 products.
        (BRANDS_AND_PRODUCTS, {"brands": 10, "products": 50}, 10 + 10 + 10 * 50),
        # Defaults: 20 brands, 20 products each.
        (BRANDS_AND_PRODUCTS, {}, 20 + 20 + 20 * 20),
        # Each product also reads its brand (a get) and the brand's counters.
        (
            "{ brands(first: 2) { edges { node { products(first: 3) { edges { node {"
            " brand { id stats { scanCount } } } } } } } } }",
            None,
            2 + 2 + 2 * 3 + 2 * 3 * (1 + 1),
        ),
        # One field in two fragments is read once, as execution merges it.
        (
            "{ explore(first: 5) { edges { node { ...A ...B } } } }"
            " fragment A on Product { brand { id } } fragment B on Product { brand { name } }",
            None,
            5 + 5 + 5,
        ),
        # Skipped fields read nothing.
        (
            "query($skip: Boolean!) { explore(first: 5) { edges { node {"
            " brand @skip(if: $skip) { id } } } } }",
            {"skip": True},
            5 + 5,
        ),
        # auditLog reads one partition per day.
        ("{ auditLog(days: 7, first: 10) { id } }", None, 7 * 10),
        ("{ health { status } viewer { role } }", None, 1),
        # A filter the key cannot express reads past the page: up to 1,000 alerts.
        (
            "{ brands(first: 2) { edges { node {"
            " threats(first: 5, minSeverity: HIGH) { edges { node { id } } } } } } }",
            None,
            2 + 2 + 2 * SCAN_MAX_ITEMS,
        ),
    ],
    ids=[
        "nested",
        "defaults",
        "gets-per-item",
        "fragments",
        "skip",
        "scatter-gather",
        "gets",
        "filtered",
    ],
)
async def test_cost(
    client: Client, query: str, variables: dict[str, Any] | None, cost: int
) -> None:
    body = await client.execute(query, variables, key=ADMIN_KEY, trace=True)
    assert "errors" not in body, body["errors"]
    assert body["extensions"]["cost"]["requestedQueryCost"] == cost
    assert body["extensions"]["cost"]["throttleStatus"]["maximumAvailable"] == MAX_COST


def test_an_operation_its_variables_change_is_measured_each_time() -> None:
    model = cost_model(schema)
    document = parse(BRANDS_AND_PRODUCTS)
    assert model.measure(document, None, {"brands": 1, "products": 1}) == 1 + 1 + 1
    assert model.measure(document, None, {"brands": 2, "products": 3}) == 2 + 2 + 6


async def test_over_budget_nothing_runs(client: Client) -> None:
    query = """{ explore(first: 100) { edges { node {
        provenance(first: 100) { edges { node { hash } } }
    } } } }"""
    body = await client.execute(query, key=ADMIN_KEY, trace=True)
    assert body["data"] is None
    assert codes(body) == ["QUERY_TOO_COMPLEX"]
    extensions = body["errors"][0]["extensions"]
    assert extensions["cost"] == 100 + 100 + 100 * 100
    assert extensions["maxCost"] == MAX_COST
    assert storage_calls(body) == 0


async def test_budget_just_under_and_just_over() -> None:
    # explore(first: 50) costs 100 (entries and products); health costs 1.
    query = "{ explore(first: 50) { edges { node { id } } } %s }"
    async with serve(Limits(max_cost=100)) as client:
        under = await client.execute(query % "", key=ADMIN_KEY, trace=True)
        assert "errors" not in under
        assert under["extensions"]["cost"]["requestedQueryCost"] == 100
        assert storage_calls(under) > 0
        over = await client.execute(query % "health { status }", key=ADMIN_KEY, trace=True)
        assert codes(over) == ["QUERY_TOO_COMPLEX"]
        assert over["errors"][0]["extensions"]["cost"] == 101
        assert storage_calls(over) == 0


async def test_a_mutation_over_budget_writes_nothing() -> None:
    async with serve(Limits(max_cost=5)) as client:
        brand_id, brand_key = await client.brand()
        product = await client.product(brand_key, brand_id)
        verify = """mutation($code: String!) { verifyProduct(code: $code) {
            scanCount product { provenance(first: 10) { edges { node { hash } } } }
        } }"""
        body = await client.execute(
            verify, {"code": product["verificationCode"]}, key=ADMIN_KEY, trace=True
        )
        assert codes(body) == ["QUERY_TOO_COMPLEX"]
        assert storage_calls(body) == 0
        check = "query($id: ID!) { product(id: $id) { scanCount } }"
        data = await client.data(check, {"id": product["id"]}, key=brand_key)
        assert data["product"]["scanCount"] == 0


@pytest.mark.parametrize(
    ("query", "variables"),
    [
        ("{ explore(first: 101) { edges { node { id } } } }", None),
        ("query($n: Int) { explore(first: $n) { edges { node { id } } } }", {"n": 101}),
        ("{ explore(first: -1) { edges { node { id } } } }", None),
        (
            "{ explore(first: 1) { edges { node {"
            " provenance(first: 500) { edges { node { hash } } } } } } }",
            None,
        ),
    ],
    ids=["literal", "variable", "negative", "nested"],
)
async def test_first_out_of_range_runs_nothing(
    client: Client, query: str, variables: dict[str, Any] | None
) -> None:
    body = await client.execute(query, variables, key=ADMIN_KEY, trace=True)
    assert body["data"] is None
    assert codes(body) == ["BAD_USER_INPUT"]
    assert "must be between 0 and 100" in body["errors"][0]["message"]
    assert storage_calls(body) == 0


async def test_first_at_the_maximum_runs(client: Client) -> None:
    body = await client.execute(
        "{ explore(first: 100) { edges { node { id } } } }", key=ADMIN_KEY, trace=True
    )
    assert "errors" not in body
    assert storage_calls(body) > 0


async def test_a_subscription_over_budget_ends_with_the_error() -> None:
    """A subscription's cost is that of one event; over the budget the stream
    yields the refusal and nothing subscribes."""
    limited = build_schema(Limits(max_cost=6))
    storage = await open_sqlite(":memory:", cursor_key=bytes(32))
    subscription = """subscription { threatAlerts(brandId: "b") {
        product { provenance(first: 5) { edges { node { hash } } } }
    } }"""
    try:
        context = request_context(storage, request_id="r1")
        results = await limited.subscribe(subscription, context_value=context)
        result = await anext(aiter(results))  # type: ignore[arg-type]
    finally:
        await storage.close()
    [error] = result.errors
    assert error.extensions is not None
    assert (error.extensions["code"], error.extensions["cost"]) == ("QUERY_TOO_COMPLEX", 1 + 1 + 5)
    assert error.extensions["requestId"] == "r1"


async def test_checking_a_product_counts_every_read_it_makes() -> None:
    """verifyProduct and verification declare the code lookup (AP05) and the
    product it loads (AP04), and also read its claim and its whole chain, as
    long as a chain can be."""
    async with serve(Limits(max_cost=5000)) as client:
        brand_id, brand_key = await client.brand()
        product = await client.product(brand_key, brand_id)
        variables = {"code": product["verificationCode"]}
        verify = "mutation($code: String!) { verifyProduct(code: $code) { result } }"
        check = "query($code: String!) { verification(code: $code) { result } }"
        for document in (verify, check):
            body = await client.execute(document, variables, key=ADMIN_KEY, trace=True)
            assert "errors" not in body, body
            assert (
                body["extensions"]["cost"]["requestedQueryCost"] == 1 + 1 + 1 + CHAIN_READ_ITEMS
            ), document


ANALYTICS = """query($b: ID!, $from: Date!, $to: Date!) {
    brand(id: $b) { %s }
}"""
ALIAS = "a%d: analytics(from: $from, to: $to) { daily { scans } results { scans } }"


def test_row6_analytics_cost_by_the_days_of_their_range() -> None:
    """Each alias reads every shard of every day of its range (BRAND_SHARDS
    per day), not 1: 92 days cost 736 per alias, one day 8."""
    model = cost_model(schema)
    one = parse(ANALYTICS % (ALIAS % 0))
    week = {"b": "x", "from": "2026-01-01", "to": "2026-01-07"}
    quarter = {"b": "x", "from": "2026-01-01", "to": "2026-04-02"}
    fields = 2  # daily and results, a get each
    assert model.measure(one, None, week) == 1 + 7 * BRAND_SHARDS + fields
    assert model.measure(one, None, quarter) == 1 + 92 * BRAND_SHARDS + fields
    thirteen = parse(ANALYTICS % " ".join(ALIAS % n for n in range(13)))
    assert model.measure(thirteen, None, quarter) == 1 + 13 * (92 * BRAND_SHARDS + fields)


async def test_row6_many_quarter_ranges_are_refused_before_reading(client: Client) -> None:
    brand_id, key = await client.brand()
    variables = {"b": brand_id, "from": "2026-01-01", "to": "2026-04-02"}
    thirteen = ANALYTICS % " ".join(ALIAS % n for n in range(13))
    body = await client.execute(thirteen, variables, key=key, trace=True)
    assert codes(body) == ["QUERY_TOO_COMPLEX"]
    assert storage_calls(body) == 0
    one = await client.execute(ANALYTICS % (ALIAS % 0), variables, key=key)
    assert "errors" not in one, one["errors"]


def test_an_alert_filter_costs_one_read_per_hundred_product_ids_it_checks() -> None:
    model = cost_model(schema)
    subscription = parse(
        """subscription($f: AlertFilterInput) { threatAlerts(brandId: "b", filter: $f) { id } }"""
    )
    webhook = parse(
        """mutation($f: AlertFilterInput) {
            registerWebhook(brandId: "b", url: "https://x.example", filter: $f) { secret }
        }"""
    )
    ids = ["01JD8X3V9Q7ZK5M2N4P6R8T0W1"] * 250
    for document in (subscription, webhook):
        bare = model.measure(document, None, {"f": None})
        assert bare is not None
        assert model.measure(document, None, {"f": {"countries": ["DE"]}}) == bare
        assert model.measure(document, None, {"f": {"productIds": ids[:100]}}) == bare + 1
        assert model.measure(document, None, {"f": {"productIds": ids}}) == bare + 3
