"""The response byte budget: counted as JSON encodes it, while both executors
build the data, and over it nothing is encoded (docs/design.md, Response budget)."""

from __future__ import annotations

import tracemalloc
import uuid
from typing import Any

import orjson
import pytest
from _asgi import codes
from _limits import ADMIN_KEY, Client, grow_chain, serve

from api.graphql.execution.budget import ResponseBytes
from api.settings.limits import MAX_RESPONSE_BYTES, Execution, Limits
from domain.errors import ResponseTooLarge

EXECUTIONS = [pytest.param(e, id=e.value) for e in Execution]
FULL_DATA = {"text": "x" * 15_000}
"""Close to the 16 KB a product's metadata or an event's data may hold."""
AMPLIFIER = (
    "query($code: String!) {"
    + " ".join(
        f"p{i}: productByCode(code: $code) {{ metadata description"
        " provenance(first: 100) { edges { node { data } } } }"
        for i in range(30)
    )
    + "}"
)


async def product_with(client: Client, metadata: dict[str, Any]) -> dict[str, Any]:
    brand_id, brand_key = await client.brand()
    data = await client.data(
        """mutation($input: RegisterProductInput!) {
            registerProduct(input: $input) { id verificationCode }
        }""",
        {
            "input": {
                "brandId": brand_id,
                "name": f"Product {uuid.uuid4().hex[:8]}",
                "description": "d" * 2000,
                "metadata": metadata,
            }
        },
        key=brand_key,
    )
    product: dict[str, Any] = data["registerProduct"]
    return product


LEAF_MAX_BYTES = len(orjson.dumps(FULL_DATA)) + 64
"""One field's value as JSON, with its key: the most a charge adds."""


def _refusals(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The bytes a response's budget had counted each time it refused."""
    used: list[int] = []
    exceeded = ResponseBytes.exceeded

    def counted(self: ResponseBytes) -> ResponseTooLarge:
        used.append(self.used)
        return exceeded(self)

    monkeypatch.setattr(ResponseBytes, "exceeded", counted)
    return used


@pytest.mark.parametrize("execution", EXECUTIONS)
async def test_a_small_request_for_a_huge_response_is_refused_unencoded(
    execution: Execution, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The finding: 30 aliases of a product with full metadata and 100 full
    events (a 4 KB request) would answer about 46 MB; the default budget stops
    it while the data is built, and the request peaks far below that."""
    async with serve(Limits(execution=execution)) as client:
        product = await product_with(client, FULL_DATA)
        await grow_chain(client.app, product["id"], 100, data=FULL_DATA)
        variables = {"code": product["verificationCode"]}
        assert len(AMPLIFIER) < 4096
        refusals = _refusals(monkeypatch)
        tracemalloc.start()
        try:
            response = await client.post(AMPLIFIER, variables)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        body = response.json()
        assert body["data"] is None
        assert codes(body) == ["QUERY_TOO_COMPLEX"]
        assert body["errors"][0]["extensions"]["maxResponseBytes"] == MAX_RESPONSE_BYTES
        assert len(response.content) < 2048
        assert peak < 3 * MAX_RESPONSE_BYTES
        # What bounds the work: the data stops at the first value past the
        # budget (one event's data at most), not after the 46 MB were built.
        assert refusals, "the budget was never charged past its limit"
        assert MAX_RESPONSE_BYTES < refusals[0] <= MAX_RESPONSE_BYTES + LEAF_MAX_BYTES


@pytest.mark.parametrize("execution", EXECUTIONS)
async def test_a_response_within_the_budget_is_answered_whole(execution: Execution) -> None:
    query = "query($id: ID!) { product(id: $id) { name metadata } }"
    async with serve(Limits(execution=execution)) as unlimited:
        product = await product_with(unlimited, {"a": "é" * 500, "b": [1, "2.5", True, None]})
        brand_answer = await unlimited.data(query, {"id": product["id"]}, key=ADMIN_KEY)
    size = len(orjson.dumps(brand_answer))
    async with serve(Limits(execution=execution, max_response_bytes=size)) as client:
        product = await product_with(client, {"a": "é" * 500, "b": [1, "2.5", True, None]})
        data = await client.data(query, {"id": product["id"]}, key=ADMIN_KEY)
        assert data["product"]["metadata"] == brand_answer["product"]["metadata"]


@pytest.mark.parametrize("execution", EXECUTIONS)
async def test_bytes_are_counted_as_json_escapes_them(execution: Execution) -> None:
    """500 control characters are 500 characters and 3,000 bytes of JSON: a
    budget of 2,000 bytes refuses them, and lets 500 letters through."""
    async with serve(Limits(execution=execution, max_response_bytes=2000)) as client:
        escaped = await product_with(client, {"a": "\u0001" * 500})
        plain = await product_with(client, {"a": "a" * 500})
        query = "query($id: ID!) { product(id: $id) { metadata } }"
        refused = await client.execute(query, {"id": escaped["id"]}, key=ADMIN_KEY)
        assert refused["data"] is None
        assert codes(refused) == ["QUERY_TOO_COMPLEX"]
        answered = await client.data(query, {"id": plain["id"]}, key=ADMIN_KEY)
        assert answered["product"]["metadata"] == {"a": "a" * 500}


@pytest.mark.parametrize("execution", EXECUTIONS)
async def test_many_small_fields_count_too(execution: Execution) -> None:
    """Keys and ``__typename`` are bytes of the response as much as values."""
    query = "{ " + " ".join(f"t{i}: __typename" for i in range(30)) + " }"
    async with serve(Limits(execution=execution, max_response_bytes=200)) as client:
        body = await client.execute(query)
        assert codes(body) == ["QUERY_TOO_COMPLEX"]
        short = await client.execute("{ a: __typename b: __typename }")
        assert short["data"] == {"a": "Query", "b": "Query"}
