"""``extensions.cost`` on every query and mutation, whichever path answers
it: the prepared lane, Strawberry's path (a trace header sends a request
there) and graphql-core (docs/design.md, Costs on every response)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from _limits import ADMIN_KEY, Client, serve
from graphql import parse

from api.graphql.schema import schema
from api.limits.cost import cost_model
from api.settings.limits import MAX_COST, Execution, Limits

PAGE = "query($id: ID!) { brand(id: $id) { name products(first: 5) { edges { node { id } } } } }"


@pytest.fixture(scope="module", params=list(Execution))
async def client(request: pytest.FixtureRequest) -> AsyncIterator[Client]:
    async with serve(Limits(execution=request.param)) as client:
        yield client


def planned(query: str, variables: dict[str, Any]) -> int | None:
    return cost_model(schema).measure(parse(query), None, variables)


@pytest.mark.parametrize("trace", [False, True], ids=["plain", "traced"])
async def test_a_query_reports_what_it_planned_and_read(client: Client, trace: bool) -> None:
    brand_id, key = await client.brand()
    for _ in range(3):
        await client.product(key, brand_id)
    variables = {"id": brand_id}
    body = await client.execute(PAGE, variables, key=key, trace=trace)
    assert "errors" not in body, body
    cost = body["extensions"]["cost"]
    assert cost["requestedQueryCost"] == planned(PAGE, variables) == 1 + 5
    assert cost["throttleStatus"] == {
        "maximumAvailable": MAX_COST,
        "currentlyAvailable": MAX_COST - 6,
    }
    actual = cost["actualQueryCost"]
    # The brand, then its page of three products: index entries and the products.
    assert actual["readItems"] >= 1 + 3
    assert actual["readUnits"] > 0
    assert actual["writeUnits"] == 0
    assert actual["storageCalls"] >= 2
    if trace:
        traced = body["extensions"]["trace"]
        assert actual["storageCalls"] == traced["storageCalls"]
        assert actual["readItems"] == traced["items"]
        assert actual["readUnits"] == traced["capacityUnits"]


async def test_a_mutation_reports_its_writes(client: Client) -> None:
    brand_id, key = await client.brand()
    body = await client.execute(
        """mutation($input: RegisterProductInput!) { registerProduct(input: $input) { id } }""",
        {"input": {"brandId": brand_id, "name": "Costed"}},
        key=key,
    )
    assert "errors" not in body, body
    actual = body["extensions"]["cost"]["actualQueryCost"]
    assert actual["writeUnits"] > 0
    assert actual["storageCalls"] >= 1


async def test_a_refused_operation_reports_its_cost_and_read_nothing() -> None:
    async with serve(Limits(max_cost=5)) as client:
        body = await client.execute(
            "{ explore(first: 50) { edges { node { id } } } }", key=ADMIN_KEY
        )
    assert body["errors"][0]["extensions"]["code"] == "QUERY_TOO_COMPLEX"
    cost = body["extensions"]["cost"]
    assert cost["requestedQueryCost"] == 100
    assert cost["throttleStatus"]["currentlyAvailable"] == 0
    assert cost["actualQueryCost"]["storageCalls"] == 0
