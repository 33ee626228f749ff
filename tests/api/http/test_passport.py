"""GET /dpp/{code}.json and Product.passport: one JSON-LD document that
validates against docs/passport.schema.json and verifies offline with only
what it carries (a hand-written canonical form and the PEM in it)."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import load_pem_public_key

SCHEMA = json.loads((Path(__file__).parents[3] / "docs" / "passport.schema.json").read_text())
PASSPORT = "query($p: ID!) { product(id: $p) { passport } }"
APPEND = """mutation($p: ID!) {
    addProvenanceEvent(productId: $p, input: {type: SHIPPED, actor: "DHL", location: "Hamburg",
        latitude: 53.55, longitude: 9.99}) { sequence hash }
}"""
EAN = "4006381333931"


def offline_hash(record: dict[str, Any]) -> str:
    canonical = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def signature_verifies(verification: dict[str, Any]) -> bool:
    key = load_pem_public_key(verification["publicKeyPem"].encode())
    assert isinstance(key, Ed25519PublicKey)
    signature = verification["signature"]
    raw = base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4))
    try:
        key.verify(raw, bytes.fromhex(verification["certificateHash"]))
    except InvalidSignature:
        return False
    return True


async def shipped_product(gateway) -> tuple[Any, dict[str, Any]]:
    brand = await gateway.register_brand(name="Stabilo")
    product = await gateway.register_product(
        brand, sku=EAN, category="pens", metadata={"colour": "grün", "size": 2}
    )
    await gateway.data(APPEND, {"p": product["id"]}, key=brand.key)
    return brand, product


async def test_the_download_validates_and_verifies_from_the_document_alone(gateway) -> None:
    _, product = await shipped_product(gateway)
    code = product["verificationCode"]
    response = await gateway.http.get(f"/dpp/{code}.json")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/ld+json")
    assert response.headers["content-disposition"] == (
        f'attachment; filename="passport-{code}.json"'
    )
    document = response.json()
    jsonschema.validate(document, SCHEMA)
    assert document["identification"] == {
        "gtin": "0" + EAN,
        "serialNumber": product["id"],
        "verificationCode": code,
    }
    assert document["manufacturer"]["name"] == "Stabilo"
    verification = document["verification"]
    record = verification["canonicalRecord"]
    assert record["name"] == document["product"]["name"] == product["name"]
    assert record["metadata"] == {"colour": "grün", "size": 2}
    assert offline_hash(record) == verification["certificateHash"] == product["certificate"]["hash"]
    assert signature_verifies(verification)
    forged = {**verification, "certificateHash": offline_hash({**record, "name": "Fake"})}
    assert not signature_verifies(forged)
    chain = document["supplyChain"]
    assert chain["chainIntact"] is True
    [shipped] = chain["events"]
    assert (shipped["type"], shipped["actor"], shipped["latitude"]) == ("SHIPPED", "DHL", "53.55")
    assert shipped["previousHash"] == verification["certificateHash"]
    assert shipped["hash"] == chain["chainHead"]


async def test_product_passport_is_the_same_document_for_the_brand_only(gateway) -> None:
    brand, product = await shipped_product(gateway)
    download = (await gateway.http.get(f"/dpp/{product['verificationCode']}.json")).json()
    field = await gateway.data(PASSPORT, {"p": product["id"]}, key=brand.key)
    assert field["product"]["passport"] == download
    other = await gateway.register_brand()
    foreign = await gateway.execute(PASSPORT, {"p": product["id"]}, key=other.key)
    assert gateway.codes(foreign) == ["NOT_FOUND"]


@pytest.mark.parametrize("code", ["ABCD-EFGH-JKMN", "not-a-code"])
async def test_an_unknown_code_is_404(sqlite_gateway, code: str) -> None:
    response = await sqlite_gateway.http.get(f"/dpp/{code}.json")
    assert response.status_code == 404


async def test_every_event_hash_recomputes_from_the_document_with_sources(gateway) -> None:
    """A partner's event carries its source, hashed; the brand's own have none."""
    from _ingest import INGEST, create_integration

    brand, product = await shipped_product(gateway)
    _, key = await create_integration(gateway, brand, "WAREHOUSE")
    received = {"eventId": "grn-1", "productId": product["id"], "type": "RECEIVED"}
    await gateway.data(INGEST, {"input": received}, key=key)
    document = (await gateway.http.get(f"/dpp/{product['verificationCode']}.json")).json()
    jsonschema.validate(document, SCHEMA)
    events = document["supplyChain"]["events"]
    assert ["source" in event for event in events] == [False, True]
    assert events[1]["source"] == "WAREHOUSE"
    previous = document["verification"]["certificateHash"]
    for event in events:
        content = {name: value for name, value in event.items() if name != "hash"}
        assert event["previousHash"] == previous
        assert offline_hash(content) == event["hash"]
        previous = event["hash"]
    assert previous == document["supplyChain"]["chainHead"]
