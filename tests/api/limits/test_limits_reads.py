"""What a request reads, bounded twice: the cost model charges a field that
reads a whole chain for the longest chain there can be, and at run time a
request stops once it has read ``max_read_items`` items or ``max_read_units``
capacity units (docs/design.md, Limits and cost)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from _asgi import codes
from _limits import ADMIN_KEY, Client, grow_chain, serve

from api.settings.limits import Execution, Limits
from domain.chain import CHAIN_MAX_EVENTS
from services.provenance.walk import CHAIN_READ_ITEMS
from services.verification.lookup import RECORD_READ_ITEMS

LONG_CHAIN = 10_000
VERIFICATION_COST = 1 + 1 + 1 + CHAIN_READ_ITEMS
"""The code lookup, the product, its claim and the longest chain."""


@pytest.fixture(scope="module")
async def client() -> AsyncIterator[Client]:
    async with serve() as client:
        yield client


@pytest.fixture(scope="module")
async def long_chain(client: Client) -> dict[str, Any]:
    """A product whose chain holds 10,000 events, as the finding built it."""
    brand_id, brand_key = await client.brand()
    product = await client.product(brand_key, brand_id)
    await grow_chain(client.app, product["id"], LONG_CHAIN)
    return product


def aliased(field: str, times: int) -> str:
    return "query($code: String!) {" + " ".join(f"v{i}: {field}" for i in range(times)) + "}"


async def test_thirty_aliased_verifications_of_a_long_chain_are_refused_before_running(
    client: Client, long_chain: dict[str, Any]
) -> None:
    """The finding: sent anonymously, this planned 3,090 and read 300,043
    items in 7 s. Each alias is now charged the whole chain it reads."""
    query = aliased("verification(code: $code) { result chainIntact }", 30)
    variables = {"code": long_chain["verificationCode"]}
    body = await client.execute(query, variables)
    assert body["data"] is None
    assert codes(body) == ["QUERY_TOO_COMPLEX"]
    assert body["errors"][0]["extensions"]["cost"] == 30 * VERIFICATION_COST
    traced = await client.execute(query, variables, key=ADMIN_KEY, trace=True)
    assert codes(traced) == ["QUERY_TOO_COMPLEX"]
    assert traced["extensions"]["trace"]["storageCalls"] == 0


async def test_a_verification_of_a_chain_past_the_cap_reads_one_full_chain(
    client: Client, long_chain: dict[str, Any]
) -> None:
    query = "query($code: String!) { verification(code: $code) { result chainIntact } }"
    variables = {"code": long_chain["verificationCode"]}
    body = await client.execute(query, variables, key=ADMIN_KEY, trace=True)
    assert "errors" not in body, body
    assert body["data"]["verification"] == {"result": "SUSPICIOUS", "chainIntact": False}
    assert body["extensions"]["cost"]["requestedQueryCost"] == VERIFICATION_COST
    calls = body["extensions"]["trace"]["calls"]
    chain_reads = [c for c in calls if c["accessPattern"] == "AP33"]
    # The claim, the chain and the product in one Query (AP33): ten pages of
    # 100 and one of 3, each reading one item past its page; cut before the
    # product, which is then read alone, and the chain not read again.
    assert len(chain_reads) == 11
    assert sum(c["items"] for c in chain_reads) <= RECORD_READ_ITEMS + len(chain_reads)
    assert sorted(c["accessPattern"] for c in calls if c not in chain_reads) == ["AP04", "AP05"]


async def test_aliases_of_one_verification_read_its_chain_once(client: Client) -> None:
    """Every alias pages through the same chain with the same cursors, so the
    request's DataLoader reads each page once."""
    brand_id, brand_key = await client.brand()
    product = await client.product(brand_key, brand_id)
    await grow_chain(client.app, product["id"], 250)
    query = aliased("verification(code: $code) { chainIntact }", 4)
    body = await client.execute(
        query, {"code": product["verificationCode"]}, key=ADMIN_KEY, trace=True
    )
    assert "errors" not in body, body
    assert all(v["chainIntact"] for v in body["data"].values())
    chain_reads = [c for c in body["extensions"]["trace"]["calls"] if c["accessPattern"] == "AP33"]
    assert len(chain_reads) == 3


async def test_a_chain_keeps_its_last_place_for_a_recall(client: Client) -> None:
    brand_id, brand_key = await client.brand()
    product = await client.product(brand_key, brand_id)
    await grow_chain(client.app, product["id"], CHAIN_MAX_EVENTS - 1)
    append = """mutation($p: ID!) {
        addProvenanceEvent(productId: $p, input: {type: INSPECTED}) { sequence }
    }"""
    refused = await client.execute(append, {"p": product["id"]}, key=brand_key)
    assert codes(refused) == ["BAD_USER_INPUT"]
    assert refused["errors"][0]["extensions"]["maxEvents"] == CHAIN_MAX_EVENTS
    recall = """mutation($p: ID!) {
        recallProduct(productId: $p, reason: "batch fault") { status }
    }"""
    data = await client.data(recall, {"p": product["id"]}, key=brand_key)
    assert data["recallProduct"]["status"] == "RECALLED"
    check = "query($code: String!) { verification(code: $code) { chainIntact } }"
    verified = await client.data(check, {"code": product["verificationCode"]})
    assert verified["verification"]["chainIntact"] is True


PROVENANCE = """query($id: ID!, $first: Int) {
    product(id: $id) { provenance(first: $first) { edges { node { hash } } } }
}"""


@pytest.mark.storage_calls
@pytest.mark.parametrize("execution", list(Execution))
async def test_a_request_stops_once_it_has_read_its_budget(execution: Execution) -> None:
    """The plan (1 + 100) is well within the cost budget; the items read are not."""
    async with serve(Limits(max_read_items=50, execution=execution)) as client:
        brand_id, brand_key = await client.brand()
        product = await client.product(brand_key, brand_id)
        await grow_chain(client.app, product["id"], 120)
        under = await client.execute(
            PROVENANCE, {"id": product["id"], "first": 20}, key=ADMIN_KEY, trace=True
        )
        assert "errors" not in under, under
        assert len(under["data"]["product"]["provenance"]["edges"]) == 20
        over = await client.execute(
            PROVENANCE, {"id": product["id"], "first": 100}, key=ADMIN_KEY, trace=True
        )
        assert over["data"] is None
        assert codes(over) == ["QUERY_TOO_COMPLEX"]
        extensions = over["errors"][0]["extensions"]
        assert extensions["maxReadItems"] == 50
        assert extensions["readItems"] > 50
        assert over["extensions"]["trace"]["items"] == extensions["readItems"]


async def test_the_read_budget_counts_capacity_units() -> None:
    async with serve(Limits(max_read_units=5)) as client:
        brand_id, brand_key = await client.brand()
        product = await client.product(brand_key, brand_id)
        await grow_chain(client.app, product["id"], 60, data={"pad": "x" * 4000})
        body = await client.execute(
            PROVENANCE, {"id": product["id"], "first": 50}, key=ADMIN_KEY, trace=True
        )
        assert codes(body) == ["QUERY_TOO_COMPLEX"]
        assert body["errors"][0]["extensions"]["maxReadUnits"] == 5


async def test_a_passport_is_charged_its_whole_chain(client: Client) -> None:
    brand_id, brand_key = await client.brand()
    product = await client.product(brand_key, brand_id)
    body = await client.execute(
        "query($id: ID!) { product(id: $id) { passport } }",
        {"id": product["id"]},
        key=brand_key,
        trace=True,
    )
    assert "errors" not in body, body
    # The product, the chain to its end and the brand it loads.
    assert body["extensions"]["cost"]["requestedQueryCost"] == 1 + CHAIN_READ_ITEMS + 1
