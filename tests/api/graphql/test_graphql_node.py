"""Relay's global object identification over HTTP, on both backends:
``nodeId`` on every Node type, ``node(id:)`` and ``nodes(ids:)``, and the
tenant matrix a global id must hold exactly as the typed field does."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import uuid
from typing import Any

import pytest
from conftest import Brand, Gateway
from graphql import parse

from api.graphql.schema import schema
from api.limits.cost import cost_model

MISSING_ID = "01ARZ3NDEKTSV4RRFFQ69G5FAV"

NODE = "query($id: ID!) { node(id: $id) { __typename nodeId ... on Brand { id } ... on Product { id } ... on ThreatAlert { id } ... on LedgerTransaction { id } ... on Webhook { id } ... on Integration { id } ... on ApiKey { id } } }"  # noqa: E501
NODES = "query($ids: [ID!]!) { nodes(ids: $ids) { __typename nodeId ... on Product { id name } ... on Brand { id name } } }"  # noqa: E501
PRODUCT_NODE = "query($id: ID!) { product(id: $id) { id nodeId name } }"


def global_id(type_name: str, raw_id: str) -> str:
    """Relay's encoding, written out independently of the server's."""
    return base64.b64encode(f"{type_name}:{raw_id}".encode()).decode()


def node_types() -> set[str]:
    core = schema.graphql_schema
    return {t.name for t in core.get_possible_types(core.get_type("Node"))}  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def world_cache() -> dict[str, dict[str, Any]]:
    return {}


@pytest.fixture
async def world(gateway: Gateway, world_cache: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """One object of every Node type, owned by one brand, and the callers of
    the tenant matrix. Shared per backend: the tests only read."""
    if gateway.backend not in world_cache:
        world_cache[gateway.backend] = await _world(gateway)
    return world_cache[gateway.backend]


async def _world(gateway: Gateway) -> dict[str, Any]:
    owner = await gateway.register_brand("Node Owner")
    other = await gateway.register_brand("Node Other")
    product = await gateway.register_product(owner, name="Node product")
    second = await gateway.register_product(owner, name="Node second")
    key = await gateway.create_key(owner, "BRAND")
    webhook = await gateway.data(
        'mutation($b: ID!) { registerWebhook(brandId: $b, url: "https://hooks.example.com/n") '
        "{ webhook { id nodeId } } }",
        {"b": owner.id},
        key=owner.key,
    )
    integration = await gateway.data(
        'mutation($b: ID!) { createIntegration(brandId: $b, name: "n", type: CUSTOM) '
        "{ integration { id nodeId } } }",
        {"b": owner.id},
        key=owner.key,
    )
    transaction = await gateway.data(
        'mutation($b: ID!, $k: String!) { grantCredits(brandId: $b, amount: "5", '
        "idempotencyKey: $k) { id nodeId } }",
        {"b": owner.id, "k": uuid.uuid4().hex},
        key=gateway.admin_key,
    )
    await gateway.data(
        'mutation($id: ID!) { recallProduct(productId: $id, reason: "node") { status } }',
        {"id": second["id"]},
        key=owner.key,
    )
    ids = {
        "Brand": owner.id,
        "Product": product["id"],
        "ThreatAlert": await _alert_id(gateway, owner),
        "LedgerTransaction": transaction["grantCredits"]["id"],
        "Webhook": webhook["registerWebhook"]["webhook"]["id"],
        "Integration": integration["createIntegration"]["integration"]["id"],
        "ApiKey": hashlib.sha256(key.encode()).hexdigest(),
    }
    return {
        "owner": owner,
        "other": other,
        "partner": await gateway.create_key(owner, "PARTNER"),
        "ids": ids,
        "second": second,
        "minted": {
            "Webhook": webhook["registerWebhook"]["webhook"]["nodeId"],
            "Integration": integration["createIntegration"]["integration"]["nodeId"],
            "LedgerTransaction": transaction["grantCredits"]["nodeId"],
        },
    }


async def _alert_id(gateway: Gateway, brand: Brand) -> str:
    """The PRODUCT_RECALL alert the relay raises after the recall (bounded wait)."""
    query = "query($b: ID!) { brand(id: $b) { threats { edges { node { id nodeId } } } } }"
    for _ in range(300):
        data = await gateway.data(query, {"b": brand.id}, key=brand.key)
        edges = data["brand"]["threats"]["edges"]
        if edges:
            node = edges[0]["node"]
            assert node["nodeId"] == global_id("ThreatAlert", node["id"])
            alert_id: str = node["id"]
            return alert_id
        await asyncio.sleep(0.02)
    raise AssertionError("the recall raised no alert")


async def test_node_round_trips_every_node_type(gateway: Gateway, world: dict[str, Any]) -> None:
    ids = world["ids"]
    assert set(ids) == node_types(), "a Node type without a round trip here"
    for type_name, raw in ids.items():
        node_id = global_id(type_name, raw)
        data = await gateway.data(NODE, {"id": node_id}, key=world["owner"].key)
        assert data["node"] == {"__typename": type_name, "nodeId": node_id, "id": raw}
    for type_name, minted in world["minted"].items():
        assert minted == global_id(type_name, ids[type_name])


async def test_existing_ids_keep_working_next_to_node_ids(
    gateway: Gateway, world: dict[str, Any]
) -> None:
    product_id = world["ids"]["Product"]
    data = await gateway.data(PRODUCT_NODE, {"id": product_id}, key=world["owner"].key)
    assert data["product"]["id"] == product_id
    assert data["product"]["nodeId"] == global_id("Product", product_id)
    # The global id is not a product id, and the product id is not a global id.
    wrong = await gateway.execute(PRODUCT_NODE, {"id": data["product"]["nodeId"]})
    assert gateway.codes(wrong) == ["UNAUTHENTICATED"]
    wrong = await gateway.execute(
        PRODUCT_NODE, {"id": data["product"]["nodeId"]}, key=world["owner"].key
    )
    assert gateway.codes(wrong) == ["BAD_USER_INPUT"]
    raw = await gateway.execute(NODE, {"id": product_id}, key=world["owner"].key)
    assert gateway.codes(raw) == ["BAD_USER_INPUT"]


# Who may see what, by type: the typed fields' rules (brand(id:), product(id:),
# threat(id:), ledgerTransaction(id:), Brand.webhooks, Brand.integrations, revokeApiKey).
READABLE_BY_PARTNER = {"Brand", "Product", "ThreatAlert"}


@pytest.mark.parametrize("caller", ["anonymous", "other brand", "partner", "admin"])
async def test_the_tenant_matrix_holds_for_global_ids(
    gateway: Gateway, world: dict[str, Any], caller: str
) -> None:
    keys = {
        "anonymous": None,
        "other brand": world["other"].key,
        "partner": world["partner"],
        "admin": gateway.admin_key,
    }
    key = keys[caller]
    for type_name, raw in world["ids"].items():
        body = await gateway.execute(NODE, {"id": global_id(type_name, raw)}, key=key)
        if caller == "admin" or (caller == "partner" and type_name in READABLE_BY_PARTNER):
            assert "errors" not in body, (type_name, body)
            assert body["data"]["node"]["id"] == raw
            continue
        expected = "UNAUTHENTICATED" if caller == "anonymous" else "NOT_FOUND"
        assert gateway.codes(body) == [expected], (type_name, body)
        assert body["data"] is None
        assert raw not in str(body["errors"]), "an error names the object"


async def test_a_foreign_global_id_answers_like_a_missing_one(
    gateway: Gateway, world: dict[str, Any]
) -> None:
    other = world["other"].key
    for type_name, raw in (("Brand", world["ids"]["Brand"]), ("Product", world["ids"]["Product"])):
        foreign = await gateway.execute(NODE, {"id": global_id(type_name, raw)}, key=other)
        missing = await gateway.execute(NODE, {"id": global_id(type_name, MISSING_ID)}, key=other)
        assert _scrub(foreign) == _scrub(missing)
        typed = type_name[0].lower() + type_name[1:]
        by_field = await gateway.execute(
            f"query($id: ID!) {{ {typed}(id: $id) {{ id }} }}", {"id": raw}, key=other
        )
        assert gateway.codes(by_field) == gateway.codes(foreign) == ["NOT_FOUND"]


def _scrub(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(e["message"], e["extensions"]["code"]) for e in body["errors"]]


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "not base64 at all!",
        global_id("Nope", MISSING_ID),
        global_id("Product", "not-an-id"),
        global_id("Product", ""),
        base64.b64encode(b"Product").decode(),
        global_id("Product", MISSING_ID).rstrip("=") + "!==",
        "x" * 300,
    ],
)
async def test_a_malformed_global_id_is_bad_user_input(
    gateway: Gateway, world: dict[str, Any], bad: str
) -> None:
    body = await gateway.execute(NODE, {"id": bad}, key=world["owner"].key)
    assert gateway.codes(body) == ["BAD_USER_INPUT"]


@pytest.mark.storage_calls
async def test_nodes_reads_each_type_in_one_batch_and_keeps_the_order(
    gateway: Gateway, world: dict[str, Any]
) -> None:
    ids = world["ids"]
    wanted = [
        global_id("Product", ids["Product"]),
        global_id("Brand", ids["Brand"]),
        "garbage",
        global_id("Product", world["second"]["id"]),
        global_id("Product", MISSING_ID),
    ]
    response = await gateway.post(NODES, {"ids": wanted}, key=world["owner"].key, trace=True)
    body = response.json()
    nodes = body["data"]["nodes"]
    assert [n and n["id"] for n in nodes] == [
        ids["Product"],
        ids["Brand"],
        None,
        world["second"]["id"],
        None,
    ]
    errors = {tuple(e["path"]): e["extensions"]["code"] for e in body["errors"]}
    assert errors == {("nodes", 2): "BAD_USER_INPUT", ("nodes", 4): "NOT_FOUND"}
    reads = [c["accessPattern"] for c in body["extensions"]["trace"]["calls"]]
    assert sorted(r for r in reads if r != "AP20") == ["AP01", "AP04"], reads


async def test_nodes_is_bounded(gateway: Gateway, world: dict[str, Any]) -> None:
    too_many = [global_id("Product", MISSING_ID)] * 101
    body = await gateway.execute(NODES, {"ids": too_many}, key=world["owner"].key)
    assert gateway.codes(body) == ["BAD_USER_INPUT"]
    assert "at most 100" in body["errors"][0]["message"]


def test_the_cost_walk_counts_a_read_per_id() -> None:
    model = cost_model(schema)
    assert model.measure(parse(NODE), None, {"id": "x"}) == 1
    ids = {"ids": ["x"] * 7}
    assert model.measure(parse(NODES), None, ids) == 7
    brand_products = "query($ids: [ID!]!) { nodes(ids: $ids) { ... on Brand { products(first: 5) { edges { node { name } } } } } }"  # noqa: E501
    assert model.measure(parse(brand_products), None, ids) == 7 + 7 * 5


async def test_page_info_is_the_full_cursor_connections_one(
    gateway: Gateway, world: dict[str, Any]
) -> None:
    """Cursors are sealed with a fresh nonce each, so they are compared by
    where they lead: after startCursor comes the page's second node."""
    query = """query($b: ID!, $first: Int, $after: String) { brand(id: $b) {
        products(first: $first, after: $after) { edges { node { id } }
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } } }"""
    owner = world["owner"]

    async def page(first: int, after: str | None = None) -> dict[str, Any]:
        variables = {"b": owner.id, "first": first, "after": after}
        products: dict[str, Any] = (await gateway.data(query, variables, key=owner.key))["brand"][
            "products"
        ]
        return products

    both = await page(2)
    info, nodes = both["pageInfo"], [edge["node"]["id"] for edge in both["edges"]]
    assert len(nodes) == 2 and info["hasPreviousPage"] is False
    assert [e["node"]["id"] for e in (await page(1, info["startCursor"]))["edges"]] == nodes[1:]
    assert (await page(1, info["endCursor"]))["edges"] == []
    empty = await page(0)
    assert empty["pageInfo"]["startCursor"] is None and empty["edges"] == []
    severe = """query($b: ID!) { brand(id: $b) { threats(minSeverity: LOW) { edges { cursor }
        pageInfo { startCursor endCursor hasPreviousPage } } } }"""
    threats = (await gateway.data(severe, {"b": owner.id}, key=owner.key))["brand"]["threats"]
    assert len(threats["edges"]) == 1
    assert threats["pageInfo"]["startCursor"] is not None
    assert threats["pageInfo"]["hasPreviousPage"] is False
