"""Certificates checked the way a third party would: with the public key PEM
from ``signingKeys`` and the product as the API returns it, nothing else."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

from _asgi import GraphQLClient, running
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import load_pem_public_key

from api.app import create_app
from api.settings.gateway import Settings
from domain.signing import SigningKey

SIGNING_KEYS = "{ signingKeys { keyId algorithm publicKeyPem active } }"
BY_CODE = """query($code: String!) { productByCode(code: $code) {
    id name sku metadata createdAt brand { id } certificate { hash signature keyId algorithm }
} }"""


def third_party_check(product: dict[str, Any], keys: list[dict[str, Any]]) -> bool:
    """Recompute the canonical record and verify the signature, per
    docs/design.md, Certificates."""
    record = {
        "productId": product["id"],
        "brandId": product["brand"]["id"],
        "name": product["name"],
        "sku": product["sku"],
        "metadata": product["metadata"],
        "createdAt": product["createdAt"],
    }
    canonical = json.dumps(
        record, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    ).encode()
    certificate = product["certificate"]
    if hashlib.sha256(canonical).hexdigest() != certificate["hash"]:
        return False
    pem = next(k["publicKeyPem"] for k in keys if k["keyId"] == certificate["keyId"])
    public_key = load_pem_public_key(pem.encode())
    assert isinstance(public_key, Ed25519PublicKey)
    signature = base64.urlsafe_b64decode(
        certificate["signature"] + "=" * (-len(certificate["signature"]) % 4)
    )
    try:
        public_key.verify(signature, bytes.fromhex(certificate["hash"]))
    except InvalidSignature:
        return False
    return True


async def test_signing_keys_are_public(gateway) -> None:
    keys = (await gateway.data(SIGNING_KEYS))["signingKeys"]
    assert keys == [
        {
            "keyId": gateway.signing_key.kid,
            "algorithm": "Ed25519",
            "publicKeyPem": gateway.signing_key.public_key_pem,
            "active": True,
        }
    ]
    assert "PRIVATE" not in str(keys)


async def test_certificate_verifies_with_only_the_public_key(gateway) -> None:
    brand = await gateway.register_brand()
    registered = await gateway.register_product(
        brand,
        name="Sneaker \u00e9\u00e8 \U0001f45f",
        sku=None,
        metadata={"z": [1, {"b": "\n", "a": None}], "a": "\u2028"},
    )
    product = (await gateway.data(BY_CODE, {"code": registered["verificationCode"]}))[
        "productByCode"
    ]
    keys = (await gateway.data(SIGNING_KEYS))["signingKeys"]
    assert product["certificate"]["algorithm"] == "Ed25519"
    assert third_party_check(product, keys)
    for field, value in (
        ("name", "Sneaker"),
        ("sku", "X"),
        ("metadata", {}),
        ("createdAt", "2020-01-01T00:00:00.000000Z"),
    ):
        assert not third_party_check({**product, field: value}, keys), field
    forged = {**product, "certificate": {**product["certificate"], "signature": "A" * 86}}
    assert not third_party_check(forged, keys)


async def test_rotation_keeps_old_certificates_verifiable(tmp_path: Path) -> None:
    old, new = SigningKey.generate(), SigningKey.generate()
    common: dict[str, Any] = {
        "cursor_key": bytes(32),
        "admin_key": "rotation-admin-key",
        "sqlite_path": str(tmp_path / "store.db"),
        "hash_salt": bytes(16),
    }

    async def run(
        settings: Settings, queries: list[tuple[str, dict[str, Any]]]
    ) -> list[dict[str, Any]]:
        app = create_app(settings)
        async with running(app) as http:
            client = GraphQLClient(app, http)
            return [await client.data(q, v, key="rotation-admin-key") for q, v in queries]

    before = Settings(signing_key=old.private_key_pem().decode(), **common)
    [brand] = await run(
        before,
        [
            (
                """mutation { registerBrand(input: {name: "R", domain: "r.example"}) { brand {
                    id } } }""",
                {},
            )
        ],
    )
    brand_id = brand["registerBrand"]["brand"]["id"]
    register = """mutation($b: ID!) { registerProduct(input: {brandId: $b, name: "Old"}) {
        verificationCode } }"""
    [product] = await run(before, [(register, {"b": brand_id})])
    code = product["registerProduct"]["verificationCode"]

    after = Settings(
        signing_key=new.private_key_pem().decode(), verifying_keys=(old.public_key_pem,), **common
    )
    keys, found, fresh = await run(
        after,
        [
            (SIGNING_KEYS, {}),
            (BY_CODE, {"code": code}),
            (
                """mutation($b: ID!) { registerProduct(input: {brandId: $b, name: "New"}) {
                id name sku metadata createdAt brand { id } certificate { hash signature keyId
                    algorithm }
            } }""",
                {"b": brand_id},
            ),
        ],
    )
    published = keys["signingKeys"]
    assert [(k["keyId"], k["active"]) for k in published] == [(new.kid, True), (old.kid, False)]
    old_product, new_product = found["productByCode"], fresh["registerProduct"]
    assert old_product["certificate"]["keyId"] == old.kid
    assert new_product["certificate"]["keyId"] == new.kid
    assert third_party_check(old_product, published)
    assert third_party_check(new_product, published)
