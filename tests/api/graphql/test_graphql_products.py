"""Products over HTTP: registration, duplicates, batches, idempotency, reads."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from services.products.registration import PRODUCTS_PER_TRANSACTION

REGISTER = """mutation($input: RegisterProductInput!, $key: String) {
    registerProduct(input: $input, idempotencyKey: $key) { id name sku createdAt }
}"""
REGISTER_MANY = """mutation($inputs: [RegisterProductInput!]!, $key: String) {
    registerProducts(inputs: $inputs, idempotencyKey: $key) { id name }
}"""
BRAND_PRODUCTS = """query($b: ID!, $first: Int, $after: String) {
    brand(id: $b) {
        stats { productCount }
        products(first: $first, after: $after) { edges { cursor node { id name } } pageInfo {
            hasNextPage endCursor } }
    }
}"""
BY_CODE = """query($code: String!) {
    productByCode(code: $code) {
        id name sku category description metadata status createdAt updatedAt
        certificate { hash }
        brand { id name domain }
    }
}"""


async def product_count(gateway, brand) -> int:
    data = await gateway.data(BRAND_PRODUCTS, {"b": brand.id, "first": 100}, key=brand.key)
    count: int = data["brand"]["stats"]["productCount"]
    assert count == len(data["brand"]["products"]["edges"])
    return count


async def test_register_product_stores_what_was_sent(gateway) -> None:
    brand = await gateway.register_brand()
    metadata = {"colour": "blue", "sizes": [40, 41], "nested": {"ok": True, "none": None}}
    product = await gateway.register_product(
        brand,
        name="Runner",
        sku="RUN-1",
        category="shoes",
        description="Line one\nLine two",
        metadata=metadata,
    )
    data = await gateway.data(
        """query($id: ID!) { product(id: $id) {
            id name sku category description metadata status createdAt updatedAt
                verificationCode scanCount
            brand { id } certificate { hash signature keyId algorithm chainHead }
        } }""",
        {"id": product["id"]},
        key=brand.key,
    )
    stored = data["product"]
    assert stored["name"] == "Runner"
    assert stored["sku"] == "RUN-1"
    assert stored["category"] == "shoes"
    assert stored["description"] == "Line one\nLine two"
    assert stored["metadata"] == metadata
    assert stored["status"] == "ACTIVE"
    assert stored["createdAt"] == stored["updatedAt"] == product["createdAt"]
    assert stored["verificationCode"] == product["verificationCode"]
    assert stored["scanCount"] == 0
    assert stored["brand"]["id"] == brand.id
    assert stored["certificate"] == product["certificate"]
    assert stored["certificate"]["chainHead"] == stored["certificate"]["hash"]
    assert stored["certificate"]["algorithm"] == "Ed25519"


async def test_duplicate_name_and_sku_is_conflict(gateway) -> None:
    brand, other = await gateway.register_brand(), await gateway.register_brand()
    await gateway.register_product(brand, name="Runner", sku="RUN-1")
    body = await gateway.execute(
        REGISTER, {"input": {"brandId": brand.id, "name": "Runner", "sku": "RUN-1"}}, key=brand.key
    )
    assert gateway.codes(body) == ["CONFLICT"]
    assert "Runner" in body["errors"][0]["message"]
    await gateway.register_product(brand, name="Runner", sku="RUN-2")
    await gateway.register_product(brand, name="Runner")
    await gateway.register_product(other, name="Runner", sku="RUN-1")
    body = await gateway.execute(
        REGISTER, {"input": {"brandId": brand.id, "name": "Runner"}}, key=brand.key
    )
    assert gateway.codes(body) == ["CONFLICT"]
    assert await product_count(gateway, brand) == 3


async def test_concurrent_duplicates_register_exactly_one(gateway) -> None:
    brand = await gateway.register_brand()
    variables = {"input": {"brandId": brand.id, "name": "Limited", "sku": "L-1"}}
    bodies = await asyncio.gather(
        *(gateway.execute(REGISTER, variables, key=brand.key) for _ in range(8))
    )
    winners = [b for b in bodies if b.get("data") and b["data"]["registerProduct"]]
    assert len(winners) == 1
    assert sorted(code for b in bodies for code in gateway.codes(b)) == ["CONFLICT"] * 7
    assert await product_count(gateway, brand) == 1


async def test_concurrent_distinct_registrations_all_count(gateway) -> None:
    brand = await gateway.register_brand()
    bodies = await asyncio.gather(
        *(
            gateway.execute(
                REGISTER, {"input": {"brandId": brand.id, "name": f"P{n}"}}, key=brand.key
            )
            for n in range(8)
        )
    )
    assert all("errors" not in body for body in bodies)
    assert await product_count(gateway, brand) == 8


async def test_register_for_missing_brand_is_not_found(gateway) -> None:
    body = await gateway.execute(
        REGISTER,
        {"input": {"brandId": "01ARZ3NDEKTSV4RRFFQ69G5FAV", "name": "P"}},
        key=gateway.admin_key,
    )
    assert gateway.codes(body) == ["NOT_FOUND"]


async def test_anonymous_cannot_register(gateway) -> None:
    brand = await gateway.register_brand()
    body = await gateway.execute(REGISTER, {"input": {"brandId": brand.id, "name": "P"}})
    assert gateway.codes(body) == ["UNAUTHENTICATED"]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"name": ""}, "input.name"),
        ({"name": "n" * 201}, "input.name"),
        ({"sku": "s" * 101}, "input.sku"),
        ({"category": "tab\there"}, "input.category"),
        ({"description": "d" * 2001}, "input.description"),
        ({"metadata": [1, 2]}, "input.metadata"),
        ({"metadata": {"price": 1.5}}, "input.metadata.price"),
        (
            {"metadata": {"a": {"b": {"c": {"d": {"e": {"f": {"g": {"h": {}}}}}}}}}},
            "input.metadata",
        ),
        ({"metadata": {"blob": "x" * (17 * 1024)}}, "input.metadata"),
        ({"brandId": "not-an-id"}, "input.brandId"),
    ],
)
async def test_register_product_validates_input(
    gateway, fields: dict[str, object], message: str
) -> None:
    brand = await gateway.register_brand()
    body = await gateway.execute(
        REGISTER, {"input": {"brandId": brand.id, "name": "Valid", **fields}}, key=brand.key
    )
    assert gateway.codes(body) == ["BAD_USER_INPUT"]
    assert body["errors"][0]["message"].startswith(message)
    assert await product_count(gateway, brand) == 0


async def test_register_products_in_several_transactions(batch_gateway) -> None:
    brand = await batch_gateway.register_brand(credits=100)
    inputs = [{"brandId": brand.id, "name": f"Item {n:02d}"} for n in range(40)]
    body = await batch_gateway.execute(REGISTER_MANY, {"inputs": inputs}, key=brand.key, trace=True)
    products = body["data"]["registerProducts"]
    assert [p["name"] for p in products] == [i["name"] for i in inputs]
    assert len({p["id"] for p in products}) == 40
    writes = [
        c for c in body["extensions"]["trace"]["calls"] if c["operation"] == "TransactWriteItems"
    ]
    registering = [c for c in writes if c["items"] > 10]
    assert len(registering) == -(-40 // PRODUCTS_PER_TRANSACTION) == 3
    assert all(c["items"] <= 100 for c in writes)
    assert await product_count(batch_gateway, brand) == 40


async def test_register_products_over_100_writes_nothing(gateway) -> None:
    brand = await gateway.register_brand(credits=200)
    inputs = [{"brandId": brand.id, "name": f"Item {n}"} for n in range(101)]
    body = await gateway.execute(REGISTER_MANY, {"inputs": inputs}, key=brand.key)
    assert gateway.codes(body) == ["BAD_USER_INPUT"]
    assert "100" in body["errors"][0]["message"]
    assert await product_count(gateway, brand) == 0
    empty = await gateway.execute(REGISTER_MANY, {"inputs": []}, key=brand.key)
    assert gateway.codes(empty) == ["BAD_USER_INPUT"]


@pytest.mark.parametrize(
    ("late", "message"),
    [
        ({"name": "Item 03"}, "inputs[60]: same name and sku as inputs[3]"),
        ({"name": ""}, "inputs[60].name"),
        ({"brandId": "01ARZ3NDEKTSV4RRFFQ69G5FAV"}, "inputs[60].brandId"),
    ],
)
async def test_a_bad_input_late_in_a_batch_writes_nothing(
    gateway, late: dict[str, str], message: str
) -> None:
    brand = await gateway.register_brand(credits=100)
    inputs = [{"brandId": brand.id, "name": f"Item {n:02d}"} for n in range(70)]
    inputs[60] = {**inputs[60], **late}
    body = await gateway.execute(REGISTER_MANY, {"inputs": inputs}, key=brand.key)
    assert gateway.codes(body) == ["BAD_USER_INPUT"]
    assert body["errors"][0]["message"].startswith(message)
    assert await product_count(gateway, brand) == 0


async def test_batch_that_meets_an_existing_product_keeps_committed_chunks(batch_gateway) -> None:
    brand = await batch_gateway.register_brand(credits=100)
    await batch_gateway.register_product(brand, name="Item 25")
    inputs = [{"brandId": brand.id, "name": f"Item {n:02d}"} for n in range(30)]
    body = await batch_gateway.execute(REGISTER_MANY, {"inputs": inputs}, key=brand.key)
    assert batch_gateway.codes(body) == ["CONFLICT"]
    error = body["errors"][0]
    assert error["message"].startswith("inputs[25]:")
    assert len(error["extensions"]["registeredIds"]) == PRODUCTS_PER_TRANSACTION
    assert await product_count(batch_gateway, brand) == 1 + PRODUCTS_PER_TRANSACTION


async def test_idempotent_retry_returns_the_first_product(gateway) -> None:
    brand = await gateway.register_brand()
    key = uuid.uuid4().hex
    variables = {"input": {"brandId": brand.id, "name": "Once", "sku": "O-1"}, "key": key}
    first = await gateway.data(REGISTER, variables, key=brand.key)
    again = await gateway.data(REGISTER, variables, key=brand.key)
    assert again == first
    changed = await gateway.execute(
        REGISTER, {**variables, "input": {**variables["input"], "sku": "O-2"}}, key=brand.key
    )
    assert gateway.codes(changed) == ["CONFLICT"]
    assert "idempotencyKey" in changed["errors"][0]["message"]
    assert await product_count(gateway, brand) == 1


async def test_concurrent_idempotent_retries_register_once(gateway) -> None:
    brand = await gateway.register_brand()
    variables = {"input": {"brandId": brand.id, "name": "Racy"}, "key": uuid.uuid4().hex}
    bodies = await asyncio.gather(
        *(gateway.execute(REGISTER, variables, key=brand.key) for _ in range(6))
    )
    ids = {b["data"]["registerProduct"]["id"] for b in bodies if b.get("data")}
    assert len(ids) == 1
    assert set(code for b in bodies for code in gateway.codes(b)) <= {"CONFLICT"}
    assert await product_count(gateway, brand) == 1


async def test_idempotency_keys_are_per_brand(gateway) -> None:
    one, two = await gateway.register_brand(), await gateway.register_brand()
    key = uuid.uuid4().hex
    a = await gateway.data(
        REGISTER, {"input": {"brandId": one.id, "name": "Same"}, "key": key}, key=one.key
    )
    b = await gateway.data(
        REGISTER, {"input": {"brandId": two.id, "name": "Same"}, "key": key}, key=two.key
    )
    assert a["registerProduct"]["id"] != b["registerProduct"]["id"]


async def test_idempotent_batch_retry_skips_what_committed(batch_gateway) -> None:
    brand = await batch_gateway.register_brand(credits=100)
    blocker = await batch_gateway.register_product(brand, name="Item 25")
    inputs = [{"brandId": brand.id, "name": f"Item {n:02d}"} for n in range(30)]
    variables = {"inputs": inputs, "key": uuid.uuid4().hex}
    failed = await batch_gateway.execute(REGISTER_MANY, variables, key=brand.key)
    assert batch_gateway.codes(failed) == ["CONFLICT"]
    committed = failed["errors"][0]["extensions"]["registeredIds"]
    again = await batch_gateway.execute(REGISTER_MANY, variables, key=brand.key)
    assert batch_gateway.codes(again) == ["CONFLICT"]
    assert again["errors"][0]["extensions"]["registeredIds"] == committed
    assert await product_count(batch_gateway, brand) == 1 + len(committed)
    assert blocker["id"] not in committed


async def test_idempotent_batch_replays_its_result(batch_gateway) -> None:
    brand = await batch_gateway.register_brand(credits=100)
    variables = {
        "inputs": [{"brandId": brand.id, "name": f"B{n}"} for n in range(25)],
        "key": uuid.uuid4().hex,
    }
    first = await batch_gateway.data(REGISTER_MANY, variables, key=brand.key)
    again = await batch_gateway.data(REGISTER_MANY, variables, key=brand.key)
    assert again == first
    assert await product_count(batch_gateway, brand) == 25


async def test_brand_products_newest_first_with_pages(gateway) -> None:
    brand = await gateway.register_brand()
    names = [f"Page {n}" for n in range(5)]
    for name in names:
        await gateway.register_product(brand, name=name)
    first = (await gateway.data(BRAND_PRODUCTS, {"b": brand.id, "first": 3}, key=brand.key))[
        "brand"
    ]["products"]
    assert [e["node"]["name"] for e in first["edges"]] == ["Page 4", "Page 3", "Page 2"]
    assert first["pageInfo"]["hasNextPage"] is True
    rest = await gateway.data(
        BRAND_PRODUCTS,
        {"b": brand.id, "first": 3, "after": first["pageInfo"]["endCursor"]},
        key=brand.key,
    )
    page = rest["brand"]["products"]
    assert [e["node"]["name"] for e in page["edges"]] == ["Page 1", "Page 0"]
    assert page["pageInfo"]["hasNextPage"] is False


async def test_brand_page_of_20_with_brand_stats_and_certificate_is_3_storage_calls(
    batch_gateway,
) -> None:
    brand = await batch_gateway.register_brand(credits=100)
    await batch_gateway.execute(
        REGISTER_MANY,
        {"inputs": [{"brandId": brand.id, "name": f"N{n}"} for n in range(20)]},
        key=brand.key,
    )
    body = await batch_gateway.execute(
        """query($b: ID!) { brand(id: $b) { name stats { productCount } products(first: 20) {
            edges { node {
            id name brand { id name stats { productCount scanCount } } certificate { hash
                signature keyId chainHead }
        } } } } }""",
        {"b": brand.id},
        key=brand.key,
        trace=True,
    )
    assert "errors" not in body
    edges = body["data"]["brand"]["products"]["edges"]
    assert len(edges) == 20
    assert all(e["node"]["brand"]["stats"]["productCount"] == 20 for e in edges)
    trace = body["extensions"]["trace"]
    assert trace["storageCalls"] <= 3, trace["calls"]
    assert sorted(trace["accessPatterns"]) == ["AP01", "AP03", "AP07"]


async def test_product_by_code_is_public_with_private_fields_refused(gateway) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand, name="Public", sku="P-1", metadata={"a": 1})
    code = product["verificationCode"]
    body = await gateway.execute(
        """query($code: String!) { productByCode(code: $code) {
            id name sku metadata certificate { hash } verificationCode scanCount brand { id
                name plan stats { productCount } }
        } }""",
        {"code": code.lower().replace("-", " ")},
    )
    found = body["data"]["productByCode"]
    assert found["id"] == product["id"]
    assert found["name"] == "Public"
    assert found["sku"] == "P-1"
    assert found["metadata"] == {"a": 1}
    assert found["certificate"]["hash"] == product["certificate"]["hash"]
    assert found["brand"]["id"] == brand.id
    assert found["verificationCode"] is None
    assert found["scanCount"] is None
    assert found["brand"]["plan"] is None
    assert found["brand"]["stats"] is None
    refused = {tuple(e["path"][1:]): e["extensions"]["code"] for e in body["errors"]}
    assert refused == {
        ("verificationCode",): "UNAUTHENTICATED",
        ("scanCount",): "UNAUTHENTICATED",
        ("brand", "plan"): "UNAUTHENTICATED",
        ("brand", "stats"): "UNAUTHENTICATED",
    }
    own = await gateway.data(
        "query($code: String!) { productByCode(code: $code) { verificationCode scanCount } }",
        {"code": code},
        key=brand.key,
    )
    assert own["productByCode"] == {"verificationCode": code, "scanCount": 0}


async def test_unknown_code_is_not_found(gateway) -> None:
    for code in ("2222-2222-2222", "not a code", ""):
        body = await gateway.execute(BY_CODE, {"code": code})
        assert gateway.codes(body) == ["NOT_FOUND"]
        assert body["data"] == {"productByCode": None}


@pytest.mark.storage_calls
async def test_explore_is_public_newest_first(gateway) -> None:
    brand = await gateway.register_brand()
    for name in ("Gallery A", "Gallery B"):
        await gateway.register_product(brand, name=name)
    query = (
        "{ explore(first: 2) { edges { node { name brand { name } verificationCode } } "
        "pageInfo { hasNextPage } } }"
    )
    body = await gateway.execute(query)
    edges = body["data"]["explore"]["edges"]
    assert [e["node"]["name"] for e in edges] == ["Gallery B", "Gallery A"]
    assert all(e["node"]["verificationCode"] is None for e in edges)
    assert set(gateway.codes(body)) == {"UNAUTHENTICATED"}
    # The trace answers only callers with a key; the reads are the same.
    traced = await gateway.execute(query, key=gateway.admin_key, trace=True)
    calls = [(c["operation"], c["accessPattern"]) for c in traced["extensions"]["trace"]["calls"]]
    assert calls == [("Query", "AP08"), ("BatchGetItem", "AP04"), ("GetItem", "AP01")]
