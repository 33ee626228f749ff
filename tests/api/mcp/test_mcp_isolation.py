"""The tenant matrix through MCP: every tool that takes a brand's id, tried
by another brand's BRAND and PARTNER keys and by an anonymous agent, over
the SDK's client in process (both backends). A foreign id answers exactly as
a missing one does, nothing of the victim's leaks, nothing is written."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from _mcp import asgi_client, error_codes, structured

from domain.threats.alerts import AlertKey, parse_alert_id

MISSING_ID = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
RECALL = """mutation($id: ID!) { recallProduct(productId: $id, reason: "Lead paint") { status } }"""
VICTIM_STATE = """query($id: ID!) {
  brand(id: $id) {
    stats { productCount openThreatCount }
    threats(first: 10) { edges { node { id resolved } } }
    products(first: 100) { edges { node { name } } }
  }
}"""

# (tool, arguments built from the target's ids)
CASES: list[tuple[str, Any]] = [
    ("list_brand_products", lambda t: {"brandId": t["brand"]}),
    ("list_brand_threats", lambda t: {"brandId": t["brand"]}),
    ("get_brand_ledger", lambda t: {"brandId": t["brand"]}),
    ("resolve_threat", lambda t: {"id": t["threat"]}),
    (
        "register_product",
        lambda t: {
            "input": {"brandId": t["brand"], "name": "Intruder"},
            "idempotencyKey": "intruder-1",
        },
    ),
]


def scrub(result: Any) -> list[dict[str, Any]]:
    """The errors without what differs per request."""
    return [
        {k: v for k, v in error.items() if k != "locations"}
        | {"extensions": {k: v for k, v in error["extensions"].items() if k != "requestId"}}
        for error in result.structured_content["errors"]
    ]


@pytest.fixture(scope="module")
def tenant_cache() -> dict[str, dict[str, Any]]:
    return {}


@pytest.fixture
async def tenants(gateway, tenant_cache) -> dict[str, Any]:
    if gateway.backend not in tenant_cache:
        tenant_cache[gateway.backend] = await _tenants(gateway)
    return tenant_cache[gateway.backend]


async def _threat(gateway, brand, product_id: str) -> str:
    await gateway.data(RECALL, {"id": product_id}, key=brand.key)
    for _ in range(200):
        state = await gateway.data(VICTIM_STATE, {"id": brand.id}, key=brand.key)
        edges = state["brand"]["threats"]["edges"]
        if edges:
            threat_id: str = edges[0]["node"]["id"]
            return threat_id
        await asyncio.sleep(0.05)
    raise AssertionError("the recall raised no threat")


def _missing_threat(threat_id: str) -> str:
    """A well-formed id of an alert that does not exist."""
    key = parse_alert_id(threat_id)
    return AlertKey(MISSING_ID, MISSING_ID, key.type, key.window_start).id


async def _tenants(gateway) -> dict[str, Any]:
    victim = await gateway.register_brand("Victim Corp")
    product = await gateway.register_product(victim, name="Secret Product", sku="SECRET-SKU")
    threat = await _threat(gateway, victim, product["id"])
    intruder = await gateway.register_brand("Intruder Inc")
    return {
        "victim": victim,
        "victim_ids": {"brand": victim.id, "threat": threat},
        "missing_ids": {"brand": MISSING_ID, "threat": _missing_threat(threat)},
        "secrets": [victim.id, product["id"], threat, "Victim Corp", "Secret Product"],
        "intruder": intruder,
        "keys": {"BRAND": intruder.key, "PARTNER": await gateway.create_key(intruder, "PARTNER")},
    }


@pytest.mark.parametrize(("tool", "arguments"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("role", ["BRAND", "PARTNER"])
async def test_foreign_id_answers_like_a_missing_one(
    gateway, tenants, role, tool, arguments
) -> None:
    async with asgi_client(gateway.app, tenants["keys"][role]) as client:
        foreign = await client.call_tool(tool, arguments(tenants["victim_ids"]))
        missing = await client.call_tool(tool, arguments(tenants["missing_ids"]))
    assert error_codes(foreign) in (["NOT_FOUND"], ["FORBIDDEN"])
    assert scrub(foreign) == scrub(missing)
    text = str(foreign.structured_content) + "".join(c.text for c in foreign.content)
    for secret in tenants["secrets"]:
        assert secret not in text


@pytest.mark.parametrize(("tool", "arguments"), CASES, ids=[c[0] for c in CASES])
async def test_anonymous_agents_reach_no_brand_tool(gateway, tenants, tool, arguments) -> None:
    async with asgi_client(gateway.app) as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        result = await client.call_tool(tool, arguments(tenants["victim_ids"]))
    assert listed == {"verify_code", "lookup_product"}
    assert error_codes(result) == ["UNAUTHENTICATED"]


async def test_the_intruder_reaches_its_own_brand(gateway, tenants) -> None:
    """The positive control: the same tools work on the caller's own brand."""
    own = {"brandId": tenants["intruder"].id}
    async with asgi_client(gateway.app, tenants["keys"]["PARTNER"]) as client:
        products = structured(await client.call_tool("list_brand_products", own))
        threats = structured(await client.call_tool("list_brand_threats", own))
    assert products["brand"]["id"] == own["brandId"]
    assert threats["brand"]["threats"]["edges"] == []
    async with asgi_client(gateway.app, tenants["keys"]["BRAND"]) as client:
        ledger = structured(await client.call_tool("get_brand_ledger", own))
    assert ledger["brand"]["ledger"]["balances"]


async def test_nothing_was_written_for_the_victim(gateway, tenants) -> None:
    for key in tenants["keys"].values():
        async with asgi_client(gateway.app, key) as client:
            for tool, arguments in CASES:
                await client.call_tool(tool, arguments(tenants["victim_ids"]))
    victim = tenants["victim"]
    state = (await gateway.data(VICTIM_STATE, {"id": victim.id}, key=victim.key))["brand"]
    assert [e["node"]["name"] for e in state["products"]["edges"]] == ["Secret Product"]
    assert state["stats"] == {"productCount": 1, "openThreatCount": 1}
    assert [e["node"]["resolved"] for e in state["threats"]["edges"]] == [False]


async def test_a_bad_key_is_refused_before_any_tool(gateway) -> None:
    """As on /graphql: 401 with UNAUTHENTICATED, before the SDK sees the request."""
    bad_key = f"pg_{uuid.uuid4().hex}"
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    response = await gateway.http.post(
        "/mcp",
        json=initialize,
        headers={"Authorization": f"Bearer {bad_key}", "Accept": "application/json"},
    )
    assert response.status_code == 401
    assert gateway.codes(response.json()) == ["UNAUTHENTICATED"]
    with pytest.raises(BaseException, match="unhandled errors"):
        async with asgi_client(gateway.app, bad_key) as client:
            await client.list_tools()
