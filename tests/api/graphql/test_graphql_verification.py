"""verifyProduct and verification over HTTP, on both backends: verdicts,
recorded scans, counters, tampering, and what is never written."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from api.graphql.execution import plan
from api.settings.limits import Lane
from domain.identifiers import hash_device_fingerprint, hash_ip
from domain.verification import WARNINGS
from resolvers.loaders import Loaders
from storage import Put, Storage, Update
from storage.access_patterns import PRODUCT_BY_ID, PRODUCT_SCANS, PROVENANCE_CHAIN

SALT = bytes(range(32))  # the gateway fixture's hash salt
VERDICT = """authentic result signatureValid chainIntact claimed isClaimant warnings scanCount
    product { id name }"""
VERIFY = f"""mutation($code: String!, $scan: ScanInput) {{
    verifyProduct(code: $code, scan: $scan) {{ {VERDICT} }}
}}"""
VERIFICATION = f"""query($code: String!) {{ verification(code: $code) {{ {VERDICT} }} }}"""
COUNTERS = """query($p: ID!) {
    product(id: $p) {
        scanCount
        brand { stats { scanCount } }
        scans { edges { node { id result country city scannedAt } } }
    }
}"""
WRITES = {"PutItem", "UpdateItem", "DeleteItem", "ConditionCheckItem", "TransactWriteItems"}


def storage_of(gateway) -> Storage:
    storage: Storage = gateway.app.state.storage
    return storage


def write_calls(body: dict[str, Any]) -> list[str]:
    return [
        c["operation"] for c in body["extensions"]["trace"]["calls"] if c["operation"] in WRITES
    ]


async def verify(
    gateway, code: str, scan: dict[str, Any] | None = None, **options: Any
) -> dict[str, Any]:
    body: dict[str, Any] = await gateway.execute(VERIFY, {"code": code, "scan": scan}, **options)
    return body


async def verdict(gateway, code: str, scan: dict[str, Any] | None = None) -> dict[str, Any]:
    body = await verify(gateway, code, scan)
    assert "errors" not in body, body["errors"]
    result: dict[str, Any] = body["data"]["verifyProduct"]
    return result


async def counters(gateway, product_id: str, key: str) -> dict[str, Any]:
    data = await gateway.data(COUNTERS, {"p": product_id}, key=key)
    product: dict[str, Any] = data["product"]
    return product


async def test_an_authentic_product_is_recorded_and_counted(gateway) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    first = await verdict(gateway, product["verificationCode"], {"country": "fr", "city": "Lyon"})
    assert first == {
        "authentic": True,
        "result": "AUTHENTIC",
        "signatureValid": True,
        "chainIntact": True,
        "claimed": False,
        "isClaimant": False,
        "warnings": [],
        "scanCount": 1,
        "product": {"id": product["id"], "name": product["name"]},
    }
    # Case, spaces and hyphens are forgiven in a code a person types.
    typed = product["verificationCode"].lower().replace("-", " ")
    assert (await verdict(gateway, typed))["scanCount"] == 2
    seen = await counters(gateway, product["id"], brand.key)
    assert seen["scanCount"] == 2
    assert seen["brand"]["stats"]["scanCount"] == 2
    scans = [edge["node"] for edge in seen["scans"]["edges"]]
    assert [(s["result"], s["country"], s["city"]) for s in scans] == [
        ("AUTHENTIC", None, None),
        ("AUTHENTIC", "FR", "Lyon"),
    ]
    # Scans are their own record: no audit entry (one daily partition would be a hot key).
    audit = await gateway.data("{ auditLog(days: 1) { action targetIds } }", key=gateway.admin_key)
    actions = [e["action"] for e in audit["auditLog"] if product["id"] in e["targetIds"]]
    assert actions == ["registerProduct"]


async def test_device_and_ip_are_stored_only_as_salted_hashes(gateway) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    fingerprint = "device-fingerprint-5d1c"
    await verdict(
        gateway,
        product["verificationCode"],
        {"deviceFingerprint": fingerprint, "userAgent": "UA/1"},
    )
    page = await storage_of(gateway).query(
        PRODUCT_SCANS, _whole_range(product["id"]), tenant="test"
    )
    (item,) = page.items
    assert item["deviceHash"] == hash_device_fingerprint(SALT, fingerprint)
    assert item["ipHash"] == hash_ip(SALT, "127.0.0.1")
    assert item["result"] == "AUTHENTIC"
    assert fingerprint not in str(item) and "127.0.0.1" not in str(item)


def _whole_range(product_id: str) -> dict[str, Any]:
    from datetime import UTC, datetime

    return {
        "product_id": product_id,
        "start": datetime(1970, 1, 1, tzinfo=UTC),
        "end": datetime(2999, 1, 1, tzinfo=UTC),
    }


@pytest.mark.parametrize("code", ["ABCD-EFGH-JKMN", "not a code at all", "x" * 500])
async def test_an_unknown_code_is_unknown_and_writes_nothing(gateway, code: str) -> None:
    body = await verify(gateway, code, {"country": "DE"}, trace=True, key=gateway.admin_key)
    assert "errors" not in body
    assert body["data"]["verifyProduct"] == {
        "authentic": False,
        "result": "UNKNOWN",
        "signatureValid": False,
        "chainIntact": False,
        "claimed": False,
        "isClaimant": False,
        "warnings": [],
        "scanCount": 0,
        "product": None,
    }
    trace = body["extensions"]["trace"]
    assert write_calls(body) == []
    assert trace["accessPatterns"] in ([], ["AP05"])


async def test_verification_reads_the_same_verdict_and_records_nothing(gateway) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    await verdict(gateway, product["verificationCode"])
    body = await gateway.execute(
        VERIFICATION, {"code": product["verificationCode"]}, trace=True, key=gateway.admin_key
    )
    assert body["data"]["verification"]["result"] == "AUTHENTIC"
    assert body["data"]["verification"]["scanCount"] == 1
    assert write_calls(body) == []
    assert (await counters(gateway, product["id"], brand.key))["scanCount"] == 1
    unknown = await gateway.execute(
        VERIFICATION, {"code": "ABCD-EFGH-JKMN"}, trace=True, key=gateway.admin_key
    )
    assert unknown["data"]["verification"]["result"] == "UNKNOWN"
    assert write_calls(unknown) == []


async def test_a_tampered_event_location_breaks_the_chain(gateway) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    for location in ("Porto", "Lyon"):
        await gateway.data(
            """mutation($p: ID!, $l: String) {
                addProvenanceEvent(productId: $p, input: {type: SHIPPED, location: $l}) { sequence }
            }""",
            {"p": product["id"], "l": location},
            key=brand.key,
        )
    assert (await verdict(gateway, product["verificationCode"]))["result"] == "AUTHENTIC"
    storage = storage_of(gateway)
    page = await storage.query(PROVENANCE_CHAIN, {"product_id": product["id"]}, tenant="test")
    first = page.items[0]
    await storage.transact_write([Put({**first, "location": "Porto (tampered)"})])
    tampered = await verdict(gateway, product["verificationCode"])
    assert tampered["result"] == "SUSPICIOUS"
    assert tampered["authentic"] is False
    assert tampered["chainIntact"] is False
    assert tampered["signatureValid"] is True
    assert WARNINGS["chain"] in tampered["warnings"]
    scans = (await counters(gateway, product["id"], brand.key))["scans"]["edges"]
    assert scans[0]["node"]["result"] == "SUSPICIOUS"


async def test_a_removed_last_event_breaks_the_chain(gateway) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    await gateway.data(
        """mutation($p: ID!) {
            addProvenanceEvent(productId: $p, input: {type: SHIPPED}) { sequence }
        }""",
        {"p": product["id"]},
        key=brand.key,
    )
    storage = storage_of(gateway)
    page = await storage.query(PROVENANCE_CHAIN, {"product_id": product["id"]}, tenant="test")
    from storage import Delete, Key

    await storage.transact_write([Delete(Key(page.items[0]["PK"], page.items[0]["SK"]))])
    assert (await verdict(gateway, product["verificationCode"]))["chainIntact"] is False


@pytest.mark.parametrize(
    ("attribute", "value", "signature_valid", "warning"),
    [
        ("name", "Counterfeit Deluxe", True, "hash"),
        ("metadata", {"edition": "fake"}, True, "hash"),
        ("signature", "A" * 86, False, "signature"),
    ],
)
async def test_a_tampered_certificate_is_counterfeit(
    gateway, attribute: str, value: Any, signature_valid: bool, warning: str
) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    key = PRODUCT_BY_ID.key(product_id=product["id"])
    await storage_of(gateway).transact_write([Update(key, set={attribute: value})])
    result = await verdict(gateway, product["verificationCode"])
    assert result["result"] == "COUNTERFEIT"
    assert result["authentic"] is False
    assert result["signatureValid"] is signature_valid
    assert WARNINGS[warning] in result["warnings"]
    assert (await counters(gateway, product["id"], brand.key))["scans"]["edges"][0]["node"][
        "result"
    ] == "COUNTERFEIT"


async def test_a_recalled_product_is_suspicious(gateway) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    await gateway.data(
        'mutation($p: ID!) { recallProduct(productId: $p, reason: "Faulty battery") { status } }',
        {"p": product["id"]},
        key=brand.key,
    )
    result = await verdict(gateway, product["verificationCode"])
    assert result["result"] == "SUSPICIOUS"
    assert result["chainIntact"] is True
    assert result["warnings"] == [WARNINGS["recalled"]]


@pytest.mark.parametrize(
    ("scan", "field"),
    [
        ({"country": "XX"}, "country"),
        ({"country": "France"}, "country"),
        ({"city": "c" * 101}, "city"),
        ({"deviceFingerprint": ""}, "deviceFingerprint"),
        ({"userAgent": "u" * 513}, "userAgent"),
    ],
)
async def test_scan_input_is_validated_before_anything_is_read(
    gateway, scan: dict[str, Any], field: str
) -> None:
    body = await verify(gateway, "ABCD-EFGH-JKMN", scan, trace=True, key=gateway.admin_key)
    assert gateway.codes(body) == ["BAD_USER_INPUT"]
    assert f"scan.{field}" in body["errors"][0]["message"]
    assert body["extensions"]["trace"]["storageCalls"] == 0


async def test_concurrent_verifications_count_every_scan(gateway) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    results = await asyncio.gather(
        *(verdict(gateway, product["verificationCode"]) for _ in range(50))
    )
    assert {r["result"] for r in results} == {"AUTHENTIC"}
    seen = await gateway.data(
        """query($p: ID!) {
            product(id: $p) {
                scanCount brand { stats { scanCount } } scans(first: 100) { edges { node { id } } }
            }
        }""",
        {"p": product["id"]},
        key=brand.key,
    )
    assert seen["product"]["scanCount"] == 50
    assert seen["product"]["brand"]["stats"]["scanCount"] == 50
    assert len({e["node"]["id"] for e in seen["product"]["scans"]["edges"]}) == 50


BRANDED = """mutation($code: String!, $scan: ScanInput) {
    verifyProduct(code: $code, scan: $scan) {
        result product { id certificate { hash } brand { name } }
    }
}"""


@pytest.mark.storage_calls
async def test_the_brand_is_one_read_with_or_without_its_dataloader(
    gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The brand is the only load of its access pattern in the mutation, so
    the plan reads it directly (``Loaders.single``): the same calls as
    through its DataLoader, one AP01 among them."""
    brand = await gateway.register_brand("Direct")
    product = await gateway.register_product(brand)
    made: list[str] = []
    item_loader = Loaders._item_loader

    def recording(self: Loaders, ap: Any) -> Any:
        made.append(ap.id)
        return item_loader(self, ap)

    monkeypatch.setattr(Loaders, "_item_loader", recording)

    async def traced(text: str) -> tuple[dict[str, Any], list[str]]:
        made.clear()
        body = await gateway.execute(
            text,
            {"code": product["verificationCode"], "scan": {"country": "FR"}},
            trace=True,
            key=gateway.admin_key,
        )
        assert "errors" not in body, body["errors"]
        calls = [str(c["accessPattern"]) for c in body["extensions"]["trace"]["calls"]]
        return body["data"], calls

    direct_data, direct_calls = await traced(BRANDED)
    planned = Lane.PLAN in gateway.app.state.settings.limits.execution
    assert ("AP01" not in made) is planned, "graphql-core loads through the DataLoader"
    monkeypatch.setattr(plan, "AP_METADATA", "not-declared")  # no field declares a read
    loaded_data, loaded_calls = await traced(BRANDED + " ")  # a new plan
    assert "AP01" in made, "positive control: the DataLoader's path"
    assert direct_data["verifyProduct"]["product"]["brand"] == {"name": "Direct"}
    assert direct_data == loaded_data
    assert sorted(direct_calls) == sorted(loaded_calls)
    assert direct_calls.count("AP01") == 1
