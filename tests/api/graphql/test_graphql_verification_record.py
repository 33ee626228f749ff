"""The verify path's reads over HTTP, on both backends: the product, its claim
and its chain come from one Query of the product's item collection (AP33),
which never reads the product's scans or disputes (docs/design.md, Verify path)."""

from __future__ import annotations

from typing import Any

import pytest
from _limits import grow_chain

from services.provenance.walk import load_chain
from services.reads import StorageReads
from services.verification.lookup import RECORD_READ_ITEMS
from storage import Put, Storage
from storage.access_patterns import PRODUCT_RECORD
from storage.limits import TRANSACT_MAX_ITEMS

VERIFY = """mutation($c: String!, $d: String) {
    verifyProduct(code: $c, scan: {deviceFingerprint: $d}) {
        result chainIntact signatureValid claimed isClaimant product { id brand { name } }
    }
}"""
VERIFICATION = """query($c: String!, $d: String) {
    verification(code: $c, deviceFingerprint: $d) { result chainIntact claimed isClaimant }
}"""
CLAIM = """mutation($c: String!, $d: String!) {
    claimProduct(code: $c, deviceFingerprint: $d) { claimedAt }
}"""
DISPUTE = """mutation($c: String!, $d: String!) {
    disputeClaim(code: $c, deviceFingerprint: $d, reason: "mine") { claimedAt }
}"""
EVENT = """mutation($p: ID!) {
    addProvenanceEvent(productId: $p, input: {type: SHIPPED}) { sequence }
}"""
ALICE, BOB = "alice-phone-3f9a", "bob-phone-77c1"


def storage_of(gateway: Any) -> Storage:
    storage: Storage = gateway.app.state.storage
    return storage


async def traced(gateway: Any, query: str, code: str, device: str | None) -> dict[str, Any]:
    body: dict[str, Any] = await gateway.execute(
        query, {"c": code, "d": device}, trace=True, key=gateway.admin_key
    )
    assert "errors" not in body, body["errors"]
    return body


def calls(body: dict[str, Any]) -> list[tuple[str, str | None]]:
    return [(c["operation"], c["accessPattern"]) for c in body["extensions"]["trace"]["calls"]]


def items_read(body: dict[str, Any], ap: str) -> int:
    return sum(c["items"] for c in body["extensions"]["trace"]["calls"] if c["accessPattern"] == ap)


@pytest.mark.storage_calls
async def test_a_verification_is_four_storage_calls_and_reads_no_scan_or_dispute(gateway) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    code = product["verificationCode"]
    for _ in range(2):
        await gateway.data(EVENT, {"p": product["id"]}, key=brand.key)
    await gateway.data(CLAIM, {"c": code, "d": ALICE})
    await gateway.data(DISPUTE, {"c": code, "d": BOB})
    for device in (ALICE, BOB):  # scans stored in the partition, after META
        await gateway.data(VERIFY, {"c": code, "d": device})

    body = await traced(gateway, VERIFY, code, BOB)
    result = body["data"]["verifyProduct"]
    assert result["result"] == "SUSPICIOUS" and result["claimed"] and not result["isClaimant"]
    assert result["chainIntact"] and result["signatureValid"]
    assert result["product"]["brand"]["name"]
    assert [ap for _, ap in calls(body) if ap != "AP20"] == ["AP05", "AP33", None, "AP01"]
    assert body["extensions"]["trace"]["storageCalls"] == 4 + calls(body).count(("GetItem", "AP20"))
    # The claim, two events and the product: not the three scans nor the dispute.
    assert items_read(body, "AP33") == 4

    mine = await traced(gateway, VERIFY, code, ALICE)
    assert mine["data"]["verifyProduct"]["result"] == "AUTHENTIC"
    assert mine["data"]["verifyProduct"]["isClaimant"] is True
    shared = await traced(gateway, VERIFICATION, code, ALICE)
    assert shared["data"]["verification"] == {
        "result": "AUTHENTIC",
        "chainIntact": True,
        "claimed": True,
        "isClaimant": True,
    }
    assert [ap for _, ap in calls(shared) if ap != "AP20"] == ["AP05", "AP33"]


async def test_a_product_without_claim_or_chain_reads_only_itself(gateway) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    body = await traced(gateway, VERIFY, product["verificationCode"], ALICE)
    result = body["data"]["verifyProduct"]
    assert (result["result"], result["claimed"], result["chainIntact"]) == (
        "AUTHENTIC",
        False,
        True,
    )
    assert items_read(body, "AP33") == 1


async def test_a_chain_spanning_pages_is_read_whole_and_checked(batch_gateway) -> None:
    gateway = batch_gateway
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    await gateway.data(CLAIM, {"c": product["verificationCode"], "d": ALICE})
    await grow_chain(gateway.app, product["id"], PRODUCT_RECORD.max_page + 5)
    body = await traced(gateway, VERIFY, product["verificationCode"], ALICE)
    assert body["data"]["verifyProduct"]["result"] == "AUTHENTIC"
    assert body["data"]["verifyProduct"]["chainIntact"] is True
    assert calls(body).count(("Query", "AP33")) == 2
    assert "AP09" not in [ap for _, ap in calls(body)]

    # The last event of the last page, tampered: the whole chain was checked.
    storage = storage_of(gateway)
    chain = await load_chain(StorageReads(storage, "test"), product["id"])
    await storage.transact_write([Put({**chain[-1], "data": {"n": -1}})])
    tampered = await traced(gateway, VERIFY, product["verificationCode"], ALICE)
    assert tampered["data"]["verifyProduct"]["result"] == "SUSPICIOUS"
    assert tampered["data"]["verifyProduct"]["chainIntact"] is False


async def test_disputes_stored_inside_the_range_are_skipped(gateway) -> None:
    """A dispute stored before disputes moved after META (``DISPUTE#...``)
    sorts between CLAIM and EVENT#: the verdict ignores it."""
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    code = product["verificationCode"]
    await gateway.data(EVENT, {"p": product["id"]}, key=brand.key)
    await gateway.data(CLAIM, {"c": code, "d": ALICE})
    legacy = {
        "PK": f"PRODUCT#{product['id']}",
        "SK": "DISPUTE#2025-01-01T00:00:00.000000Z#01J0000000000000000000000",
        "entity": "Dispute",
        "status": "OPEN",
        "sequence": 1,
        "hash": "0" * 64,
    }
    await storage_of(gateway).transact_write([Put(legacy)])
    body = await traced(gateway, VERIFY, code, ALICE)
    assert body["data"]["verifyProduct"]["result"] == "AUTHENTIC"
    assert body["data"]["verifyProduct"]["isClaimant"] is True
    assert items_read(body, "AP33") == 4


async def test_a_read_cut_before_the_product_reads_product_and_chain_alone(
    sqlite_gateway,
) -> None:
    """Old disputes filling the whole AP33 budget before META: the product
    (AP04) and the chain (AP09) are read on their own, and the verdict holds.
    The fallback is the service's, whatever the backend; on the embedded
    store only, as 1,003 items through moto take half a minute."""
    gateway = sqlite_gateway
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    code = product["verificationCode"]
    await gateway.data(EVENT, {"p": product["id"]}, key=brand.key)
    legacy = [
        Put(
            {
                "PK": f"PRODUCT#{product['id']}",
                "SK": f"DISPUTE#2025-01-01T00:00:00.000000Z#{n:026d}",
                "entity": "Dispute",
            }
        )
        for n in range(RECORD_READ_ITEMS)
    ]
    for start in range(0, len(legacy), TRANSACT_MAX_ITEMS):
        await storage_of(gateway).transact_write(legacy[start : start + TRANSACT_MAX_ITEMS])
    body = await traced(gateway, VERIFY, code, ALICE)
    result = body["data"]["verifyProduct"]
    assert (result["result"], result["chainIntact"]) == ("AUTHENTIC", True)
    read = [ap for _, ap in calls(body)]
    assert read.count("AP33") == 11 and read.count("AP04") == 1 and read.count("AP09") == 1
