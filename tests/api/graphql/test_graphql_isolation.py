"""Tenant isolation: every query and mutation that takes an id, tried with
another brand's keys. A foreign id must answer exactly as a missing one does,
and no error may carry the other brand's data."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

MISSING_ID = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
MISSING_KEY_ID = "0" * 64

# (name, operation, variables built from the target's ids)
CASES: list[tuple[str, str, Any]] = [
    ("brand", "query($id: ID!) { brand(id: $id) { id name } }", lambda t: {"id": t["brand"]}),
    (
        "brand.products",
        "query($id: ID!) { brand(id: $id) { products { edges { node { id } } } } }",
        lambda t: {"id": t["brand"]},
    ),
    ("product", "query($id: ID!) { product(id: $id) { id name } }", lambda t: {"id": t["product"]}),
    (
        "registerProduct",
        'mutation($id: ID!) { registerProduct(input: {brandId: $id, name: "Intruder"}) { id } }',
        lambda t: {"id": t["brand"]},
    ),
    (
        "registerProducts",
        'mutation($id: ID!) { registerProducts(inputs: [{brandId: $id, name: "Intruder"}]) { '
        "id } }",
        lambda t: {"id": t["brand"]},
    ),
    (
        "createApiKey",
        'mutation($id: ID!) { createApiKey(brandId: $id, name: "intruder", role: BRAND) { id '
        "apiKey } }",
        lambda t: {"id": t["brand"]},
    ),
    (
        "revokeApiKey",
        "mutation($id: ID!) { revokeApiKey(id: $id) { id } }",
        lambda t: {"id": t["key"]},
    ),
]


def scrub(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The errors without what differs per request."""
    return [
        {k: v for k, v in error.items() if k != "locations"}
        | {"extensions": {k: v for k, v in error["extensions"].items() if k != "requestId"}}
        for error in body["errors"]
    ]


@pytest.fixture(scope="module")
def tenant_cache() -> dict[str, dict[str, Any]]:
    return {}


@pytest.fixture
async def tenants(gateway, tenant_cache) -> dict[str, Any]:
    """Two brands per backend and module: the victim (with a product) and the
    intruder (with a partner key too). Shared, because every case only reads
    or fails to write."""
    if gateway.backend not in tenant_cache:
        tenant_cache[gateway.backend] = await _tenants(gateway)
    return tenant_cache[gateway.backend]


async def _tenants(gateway) -> dict[str, Any]:
    victim = await gateway.register_brand("Victim Corp")
    product = await gateway.register_product(victim, name="Secret Product", sku="SECRET-SKU")
    intruder = await gateway.register_brand("Intruder Inc")
    return {
        "victim": victim,
        "victim_ids": {
            "brand": victim.id,
            "product": product["id"],
            "key": hashlib.sha256(victim.key.encode()).hexdigest(),
        },
        "missing_ids": {"brand": MISSING_ID, "product": MISSING_ID, "key": MISSING_KEY_ID},
        "secrets": [
            victim.id,
            product["id"],
            "Victim Corp",
            "Secret Product",
            "SECRET-SKU",
            product["verificationCode"],
        ],
        "intruder": intruder,
        "partner": await gateway.create_key(intruder, "PARTNER"),
    }


@pytest.mark.parametrize(("name", "operation", "variables"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("role", ["BRAND", "PARTNER"])
async def test_foreign_id_is_not_found_like_a_missing_one(
    gateway, tenants, role, name, operation, variables
) -> None:
    key = tenants["intruder"].key if role == "BRAND" else tenants["partner"]
    foreign = await gateway.execute(operation, variables(tenants["victim_ids"]), key=key)
    missing = await gateway.execute(operation, variables(tenants["missing_ids"]), key=key)
    assert gateway.codes(foreign) == ["NOT_FOUND"]
    assert scrub(foreign) == scrub(missing)
    text = str(foreign)
    for secret in tenants["secrets"]:
        assert secret not in text


async def test_nothing_was_written_for_the_victim(gateway, tenants) -> None:
    for _name, operation, variables in CASES:
        await gateway.execute(
            operation, variables(tenants["victim_ids"]), key=tenants["intruder"].key
        )
    data = await gateway.data(
        "query($id: ID!) { brand(id: $id) { stats { productCount } products { edges { node { "
        "name } } } } }",
        {"id": tenants["victim"].id},
        key=tenants["victim"].key,
    )
    names = [e["node"]["name"] for e in data["brand"]["products"]["edges"]]
    assert "Secret Product" in names
    assert "Intruder" not in names
    assert data["brand"]["stats"]["productCount"] == len(names)
    keys = await gateway.data("{ viewer { brandId } }", key=tenants["victim"].key)
    assert keys["viewer"]["brandId"] == tenants["victim"].id


async def test_foreign_cursor_is_refused(gateway, tenants) -> None:
    victim, intruder = tenants["victim"], tenants["intruder"]
    await gateway.register_product(victim, name="Second")
    await gateway.register_product(intruder, name="Own 1")
    await gateway.register_product(intruder, name="Own 2")
    page = await gateway.data(
        "query($id: ID!) { brand(id: $id) { products(first: 1) { pageInfo { endCursor } } } }",
        {"id": victim.id},
        key=victim.key,
    )
    cursor = page["brand"]["products"]["pageInfo"]["endCursor"]
    body = await gateway.execute(
        "query($id: ID!, $after: String) { brand(id: $id) { products(first: 5, after: $after) "
        "{ edges { node { name } } } } }",
        {"id": intruder.id, "after": cursor},
        key=intruder.key,
    )
    assert gateway.codes(body) == ["BAD_USER_INPUT"]
    assert body["data"]["brand"]["products"] is None
    for secret in tenants["secrets"]:
        assert secret not in str(body)


async def test_gallery_cursor_is_bound_to_its_caller(gateway, tenants) -> None:
    await gateway.register_product(tenants["victim"], name="Gallery item")
    page = await gateway.data(
        "{ explore(first: 1) { pageInfo { endCursor } } }", key=tenants["victim"].key
    )
    cursor = page["explore"]["pageInfo"]["endCursor"]
    query = "query($after: String) { explore(first: 1, after: $after) { edges { node { name } } } }"
    assert gateway.codes(
        await gateway.execute(query, {"after": cursor}, key=tenants["intruder"].key)
    ) == ["BAD_USER_INPUT"]
    assert gateway.codes(await gateway.execute(query, {"after": cursor})) == ["BAD_USER_INPUT"]
    assert "errors" not in await gateway.execute(
        query, {"after": cursor}, key=tenants["victim"].key
    )


async def test_product_by_code_shows_a_foreign_key_public_fields_only(gateway, tenants) -> None:
    victim = tenants["victim"]
    product = await gateway.register_product(victim, name="Scanned")
    body = await gateway.execute(
        "query($code: String!) { productByCode(code: $code) { name verificationCode scanCount "
        "brand { name plan stats { productCount } } } }",
        {"code": product["verificationCode"]},
        key=tenants["intruder"].key,
    )
    found = body["data"]["productByCode"]
    assert found["name"] == "Scanned"
    assert found["brand"]["name"] == "Victim Corp"
    assert (
        found["verificationCode"],
        found["scanCount"],
        found["brand"]["plan"],
        found["brand"]["stats"],
    ) == (None,) * 4
    assert set(gateway.codes(body)) == {"FORBIDDEN"}
    assert len(body["errors"]) == 4
    assert product["verificationCode"] not in str(body["errors"])
    body = await gateway.execute(
        "query($code: String!) { productByCode(code: $code) { brand { products { edges { node "
        "{ id } } } } } }",
        {"code": product["verificationCode"]},
        key=tenants["intruder"].key,
    )
    assert gateway.codes(body) == ["FORBIDDEN"]
    assert body["data"]["productByCode"]["brand"]["products"] is None


async def test_admin_reaches_every_brand(gateway, tenants) -> None:
    ids = tenants["victim_ids"]
    data = await gateway.data(
        "query($b: ID!, $p: ID!) { brand(id: $b) { name plan } product(id: $p) { name "
        "verificationCode } }",
        {"b": ids["brand"], "p": ids["product"]},
        key=gateway.admin_key,
    )
    assert data["brand"]["name"] == "Victim Corp"
    assert data["product"]["name"] == "Secret Product"
