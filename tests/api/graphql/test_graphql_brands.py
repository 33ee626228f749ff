"""Brands and API keys over HTTP: registerBrand, brand, brands, createApiKey, revokeApiKey."""

from __future__ import annotations

import hashlib

import pytest

REGISTER_BRAND = """mutation($input: RegisterBrandInput!) {
    registerBrand(input: $input) {
        apiKey
        brand { id name domain industry plan createdAt stats { productCount scanCount
            threatCount openThreatCount } }
    }
}"""
VIEWER = "{ viewer { role brandId } }"
REVOKE = "mutation($id: ID!) { revokeApiKey(id: $id) { id name role brandId revokedAt } }"
BRANDS = """query($first: Int, $after: String) {
    brands(first: $first, after: $after) { edges { cursor node { id name } } pageInfo {
        hasNextPage endCursor } }
}"""
BRAND_INPUT = {
    "name": "Acme Shoes",
    "domain": "Acme.Example.com",
    "industry": "footwear",
    "plan": "PRO",
}


async def test_register_brand_is_admin_only(gateway) -> None:
    brand = await gateway.register_brand()
    partner = await gateway.create_key(brand, "PARTNER")
    for key, code in ((None, "UNAUTHENTICATED"), (brand.key, "FORBIDDEN"), (partner, "FORBIDDEN")):
        body = await gateway.execute(REGISTER_BRAND, {"input": BRAND_INPUT}, key=key)
        assert gateway.codes(body) == [code]
        assert body["data"] is None


async def test_register_brand_returns_profile_and_zero_counters(gateway) -> None:
    data = await gateway.data(REGISTER_BRAND, {"input": BRAND_INPUT}, key=gateway.admin_key)
    brand = data["registerBrand"]["brand"]
    assert brand["name"] == "Acme Shoes"
    assert brand["domain"] == "acme.example.com"
    assert brand["industry"] == "footwear"
    assert brand["plan"] == "PRO"
    assert brand["createdAt"].endswith("Z")
    assert brand["stats"] == {
        "productCount": 0,
        "scanCount": 0,
        "threatCount": 0,
        "openThreatCount": 0,
    }


async def test_first_key_works_and_is_shown_only_once(gateway) -> None:
    data = await gateway.data(REGISTER_BRAND, {"input": BRAND_INPUT}, key=gateway.admin_key)
    key, brand_id = data["registerBrand"]["apiKey"], data["registerBrand"]["brand"]["id"]
    assert key.startswith("pg_")
    viewer = await gateway.data(VIEWER, key=key)
    assert viewer["viewer"] == {"role": "BRAND", "brandId": brand_id}
    later = await gateway.execute(
        """query($id: ID!) { brand(id: $id) { id name plan stats { productCount } }
            auditLog(days: 1) { targetIds } }""",
        {"id": brand_id},
        key=gateway.admin_key,
    )
    assert key not in str(later)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("name", ""),
        ("name", "x" * 201),
        ("domain", "not a domain"),
        ("domain", "https://acme.example/"),
        ("industry", "\x00"),
    ],
)
async def test_register_brand_validates_input(gateway, field: str, value: str) -> None:
    body = await gateway.execute(
        REGISTER_BRAND, {"input": {**BRAND_INPUT, field: value}}, key=gateway.admin_key
    )
    assert gateway.codes(body) == ["BAD_USER_INPUT"]
    assert field in body["errors"][0]["message"]


async def test_create_api_key_roles(gateway) -> None:
    brand = await gateway.register_brand()
    data = await gateway.data(
        """mutation($b: ID!) { createApiKey(brandId: $b, name: "ci", role: PARTNER) { id
            apiKey } }""",
        {"b": brand.id},
        key=brand.key,
    )
    created = data["createApiKey"]
    assert created["id"] == hashlib.sha256(created["apiKey"].encode()).hexdigest()
    viewer = await gateway.data(VIEWER, key=created["apiKey"])
    assert viewer["viewer"] == {"role": "PARTNER", "brandId": brand.id}
    writer = await gateway.create_key(brand, "BRAND")
    assert (await gateway.data(VIEWER, key=writer))["viewer"]["role"] == "BRAND"


async def test_create_api_key_for_missing_brand_is_not_found(gateway) -> None:
    body = await gateway.execute(
        """mutation { createApiKey(brandId: "01ARZ3NDEKTSV4RRFFQ69G5FAV", name: "x", role:
            BRAND) { id } }""",
        key=gateway.admin_key,
    )
    assert gateway.codes(body) == ["NOT_FOUND"]


async def test_revoked_key_is_unauthenticated(gateway) -> None:
    brand = await gateway.register_brand()
    key = await gateway.create_key(brand, "BRAND")
    key_id = hashlib.sha256(key.encode()).hexdigest()
    data = await gateway.data(REVOKE, {"id": key_id}, key=brand.key)
    revoked = data["revokeApiKey"]
    assert revoked["id"] == key_id
    assert revoked["role"] == "BRAND"
    assert revoked["revokedAt"] is not None
    response = await gateway.post(VIEWER, key=key)
    assert response.status_code == 401
    assert gateway.codes(response.json()) == ["UNAUTHENTICATED"]
    again = await gateway.data(REVOKE, {"id": key_id}, key=gateway.admin_key)
    assert again["revokeApiKey"]["revokedAt"] == revoked["revokedAt"]
    assert (await gateway.data(VIEWER, key=brand.key))["viewer"]["brandId"] == brand.id


async def test_a_key_can_revoke_itself(gateway) -> None:
    brand = await gateway.register_brand()
    key_id = hashlib.sha256(brand.key.encode()).hexdigest()
    await gateway.data(REVOKE, {"id": key_id}, key=brand.key)
    assert (await gateway.post(VIEWER, key=brand.key)).status_code == 401


async def test_unknown_key_id_is_not_found(gateway) -> None:
    for key_id in ("0" * 64, "not-a-hash"):
        body = await gateway.execute(REVOKE, {"id": key_id}, key=gateway.admin_key)
        assert gateway.codes(body) == ["NOT_FOUND"]


async def test_partner_reads_but_cannot_write(gateway) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    partner = await gateway.create_key(brand, "PARTNER")
    read = await gateway.data(
        """query($b: ID!, $p: ID!) {
            brand(id: $b) { id plan stats { productCount } products { edges { node { id
                verificationCode } } } }
            product(id: $p) { id verificationCode scanCount }
        }""",
        {"b": brand.id, "p": product["id"]},
        key=partner,
    )
    assert read["brand"]["stats"]["productCount"] == 1
    assert read["product"]["verificationCode"] == product["verificationCode"]
    writes = [
        (
            """mutation($b: ID!) { registerProduct(input: {brandId: $b, name: "P"}) { id } }""",
            {"b": brand.id},
        ),
        (
            """mutation($b: ID!) { registerProducts(inputs: [{brandId: $b, name: "P"}]) { id } }""",
            {"b": brand.id},
        ),
        (
            """mutation($b: ID!) { createApiKey(brandId: $b, name: "x", role: BRAND) { id } }""",
            {"b": brand.id},
        ),
        (REVOKE, {"id": hashlib.sha256(brand.key.encode()).hexdigest()}),
    ]
    for query, variables in writes:
        body = await gateway.execute(query, variables, key=partner)
        assert gateway.codes(body) == ["FORBIDDEN"], query
    assert (await gateway.data(VIEWER, key=brand.key))["viewer"]["role"] == "BRAND"
    stats = await gateway.data(
        "query($b: ID!) { brand(id: $b) { stats { productCount } } }",
        {"b": brand.id},
        key=brand.key,
    )
    assert stats["brand"]["stats"]["productCount"] == 1


async def test_brands_is_admin_only(gateway) -> None:
    brand = await gateway.register_brand()
    for key, code in ((None, "UNAUTHENTICATED"), (brand.key, "FORBIDDEN")):
        assert gateway.codes(await gateway.execute(BRANDS, key=key)) == [code]


async def test_brands_paginate_newest_first(gateway) -> None:
    names = [f"Brand {n}" for n in range(3)]
    ids = [(await gateway.register_brand(name)).id for name in names]
    first = (await gateway.data(BRANDS, {"first": 2}, key=gateway.admin_key))["brands"]
    assert [e["node"]["id"] for e in first["edges"]] == ids[::-1][:2]
    assert [e["node"]["name"] for e in first["edges"]] == ["Brand 2", "Brand 1"]
    assert first["pageInfo"]["hasNextPage"] is True
    second = (
        await gateway.data(
            BRANDS, {"first": 1, "after": first["pageInfo"]["endCursor"]}, key=gateway.admin_key
        )
    )["brands"]
    assert [e["node"]["id"] for e in second["edges"]] == [ids[0]]
    middle = (
        await gateway.data(
            BRANDS, {"first": 1, "after": first["edges"][0]["cursor"]}, key=gateway.admin_key
        )
    )["brands"]
    assert [e["node"]["id"] for e in middle["edges"]] == [ids[1]]


async def test_brands_page_reads_index_then_one_batch(gateway) -> None:
    for n in range(3):
        await gateway.register_brand(f"Batch {n}")
    body = await gateway.execute(
        "{ brands(first: 3) { edges { node { name } } } }", key=gateway.admin_key, trace=True
    )
    calls = body["extensions"]["trace"]["calls"]
    assert [(c["operation"], c["accessPattern"]) for c in calls] == [
        ("Query", "AP02"),
        ("BatchGetItem", "AP01"),
    ]


async def test_brands_first_out_of_range_is_bad_input(gateway) -> None:
    for first in (-1, 101):
        body = await gateway.execute(BRANDS, {"first": first}, key=gateway.admin_key)
        assert gateway.codes(body) == ["BAD_USER_INPUT"]


async def test_tampered_cursor_is_bad_input(gateway) -> None:
    await gateway.register_brand()
    page = (await gateway.data(BRANDS, {"first": 1}, key=gateway.admin_key))["brands"]
    cursor = page["pageInfo"]["endCursor"]
    tampered = cursor[:-2] + ("AA" if not cursor.endswith("AA") else "BB")
    body = await gateway.execute(BRANDS, {"first": 1, "after": tampered}, key=gateway.admin_key)
    assert gateway.codes(body) == ["BAD_USER_INPUT"]
