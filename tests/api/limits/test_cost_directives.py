"""The printed cost directives and the planner agree: over generated queries
(hypothesis-graphql, against a seeded gateway) and a fixed set of mutations,
the cost read from ``schema.graphql`` alone is at least the planned cost,
and the planned cost at least what running the operation read
(docs/design.md, Cost directives; Costs on every response)."""

from __future__ import annotations

import statistics
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from _sdl_cost import SDLCost
from graphql import IntValueNode, StringValueNode, build_schema, parse
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis_graphql import queries

from api.graphql.schema import schema as default_schema
from api.limits.cost import cost_model
from api.settings.limits import MAX_COST
from domain.errors import ProofgateError

SDL = build_schema((Path(__file__).parents[3] / "schema.graphql").read_text())
GENERATED = 300
ratios: list[float] = []
compared: dict[str, int] = {"planned": 0, "ran": 0, "lookahead_over_plan": 0}


@pytest.fixture(scope="module")
async def seeded(sqlite_gateway: Any) -> AsyncIterator[dict[str, Any]]:
    """The seeded gateway; once every test of the module ran, in whatever
    order, the median of planned over actual items read goes to the output."""
    brand = await sqlite_gateway.register_brand("Costs", plan="PRO", credits=20)
    products = [await sqlite_gateway.register_product(brand, sku=f"C-{i}") for i in range(4)]
    for product in products[:2]:
        await sqlite_gateway.data(
            "mutation($c: String!) { verifyProduct(code: $c) { result } }",
            {"c": product["verificationCode"]},
        )
    yield {"gateway": sqlite_gateway, "brand": brand, "products": products}
    if ratios:
        median = statistics.median(ratios)
        print(f"\n{compared}; planned/actual read items over {len(ratios)}: median {median:.2f}")
        assert median >= 1


def planned(text: str) -> int | None:
    try:
        return cost_model(default_schema).measure(parse(text), None, None)
    except ProofgateError:
        return None  # refused before it runs: BAD_USER_INPUT, nothing to compare


async def check(gateway: Any, text: str, variables: dict[str, Any] | None = None) -> None:
    document = parse(text)
    plan = cost_model(default_schema).measure(document, None, variables)
    if plan is None:
        return
    compared["planned"] += 1
    if variables is None:
        assert SDLCost(SDL, document).total() >= plan, text
    if plan > MAX_COST:
        return
    body = await gateway.execute(text, variables, key=gateway.admin_key, trace=True)
    cost = body["extensions"]["cost"]
    compared["ran"] += 1
    assert cost["requestedQueryCost"] == plan, text
    actual = cost["actualQueryCost"]
    assert plan >= actual["readUnits"], (text, actual)
    queries_run = sum(call["operation"] == "Query" for call in body["extensions"]["trace"]["calls"])
    # A query reads one item past its page to know hasNextPage (docs/design.md, Limits and cost).
    assert plan + queries_run >= actual["readItems"], (text, actual)
    compared["lookahead_over_plan"] += plan < actual["readItems"]
    if actual["readItems"]:
        ratios.append(plan / actual["readItems"])


def _scalars(seeded: dict[str, Any]) -> dict[str, Any]:
    ids = [seeded["brand"].id, *(p["id"] for p in seeded["products"])]
    codes = [p["verificationCode"] for p in seeded["products"]]
    return {
        "ID": st.sampled_from(ids).map(lambda v: StringValueNode(value=v)),
        "String": st.sampled_from([*codes, *ids, "x"]).map(lambda v: StringValueNode(value=v)),
        "Int": st.integers(1, 10).map(lambda v: IntValueNode(value=str(v))),
        "Date": st.sampled_from(["2026-11-30", "2026-11-01"]).map(
            lambda v: StringValueNode(value=v)
        ),
        "DateTime": st.just(StringValueNode(value="2026-11-30T12:00:00Z")),
        "Decimal": st.just(StringValueNode(value="1.00")),
        "JSON": st.just(StringValueNode(value="x")),
    }


@settings(
    max_examples=GENERATED,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
    phases=(Phase.explicit, Phase.generate),
)
@given(data=st.data())
async def test_generated_queries(seeded: dict[str, Any], data: st.DataObject) -> None:
    text = str(data.draw(queries(default_schema.graphql_schema, custom_scalars=_scalars(seeded))))
    await check(seeded["gateway"], text)


async def test_mutations_and_the_explorer_shapes(seeded: dict[str, Any]) -> None:
    brand, product = seeded["brand"], seeded["products"][0]
    code = product["verificationCode"]
    await check(
        seeded["gateway"],
        f'mutation {{ verifyProduct(code: "{code}") '
        "{ result product { id brand { id } } } }",
    )
    await check(
        seeded["gateway"],
        f'query {{ verification(code: "{code}") {{ result }} '
        f'product(id: "{product["id"]}") {{ passport provenance(first: 5) '
        "{ edges { node { hash } } } } }",
    )
    await check(
        seeded["gateway"],
        f'mutation {{ registerProduct(input: {{brandId: "{brand.id}", '
        f'name: "{uuid.uuid4().hex[:8]}"}}) {{ id brand {{ name }} }} }}',
    )
    await check(
        seeded["gateway"],
        f'{{ brand(id: "{brand.id}") {{ products(first: 3) {{ edges {{ node {{ id '
        "scans(first: 2) { edges { node { id } } } } } } threats(minSeverity: HIGH) "
        "{ edges { node { id } } } } explore { edges { node { id } } } }",
    )
