"""claimProduct, disputeClaim, Product.claim and Verification.claimed/isClaimant
over HTTP, on both backends."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from domain.datetimes import parse_datetime
from domain.identifiers import hash_device_fingerprint
from services.context import CLAIM_TTL_DEFAULT, Services
from storage.access_patterns import PRODUCT_CLAIM

SALT = bytes(range(32))  # the gateway fixture's hash salt
CLAIM = """mutation($c: String!, $d: String!) {
    claimProduct(code: $c, deviceFingerprint: $d) { claimedAt expiresAt }
}"""
DISPUTE = """mutation($c: String!, $d: String!, $r: String!) {
    disputeClaim(code: $c, deviceFingerprint: $d, reason: $r) { claimedAt expiresAt }
}"""
VERIFY = """mutation($c: String!, $d: String) {
    verifyProduct(code: $c, scan: {deviceFingerprint: $d}) { claimed isClaimant }
}"""
VERIFICATION = """query($c: String!, $d: String) {
    verification(code: $c, deviceFingerprint: $d) { claimed isClaimant }
}"""
VERDICT = """mutation($c: String!, $d: String) {
    verifyProduct(code: $c, scan: {deviceFingerprint: $d}) {
        authentic result claimed isClaimant warnings
    }
}"""
SCANS = "query($p: ID!) { product(id: $p) { scans(first: 10) { edges { node { result } } } } }"
PRODUCT_CLAIM_QUERY = "query($p: ID!) { product(id: $p) { claim { claimedAt expiresAt } } }"
ALICE, BOB = "alice-phone-3f9a", "bob-phone-77c1"


def services_of(gateway) -> Services:
    services: Services = gateway.app.state.graphql.services
    return services


async def claim(gateway, code: str, device: str) -> dict[str, Any]:
    body: dict[str, Any] = await gateway.execute(CLAIM, {"c": code, "d": device})
    return body


async def dispute(gateway, code: str, device: str, reason: str = "I bought it") -> dict[str, Any]:
    body: dict[str, Any] = await gateway.execute(DISPUTE, {"c": code, "d": device, "r": reason})
    return body


async def stored_claim(gateway, product_id: str) -> dict[str, Any] | None:
    item: dict[str, Any] | None = await gateway.app.state.storage.get(
        PRODUCT_CLAIM, product_id=product_id
    )
    return item


async def test_one_claimant_who_is_recognised_but_never_revealed(gateway) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    code = product["verificationCode"]
    before = await gateway.data(VERIFICATION, {"c": code, "d": ALICE})
    assert before["verification"] == {"claimed": False, "isClaimant": False}
    body = await claim(gateway, code, ALICE)
    made = body["data"]["claimProduct"]
    claimed_at, expires_at = parse_datetime(made["claimedAt"]), parse_datetime(made["expiresAt"])
    assert abs(expires_at - claimed_at - CLAIM_TTL_DEFAULT) < timedelta(seconds=1)
    for device in (BOB, ALICE):
        again = await claim(gateway, code, device)
        assert gateway.codes(again) == ["CONFLICT"]
    assert (await gateway.data(VERIFY, {"c": code, "d": ALICE}))["verifyProduct"] == {
        "claimed": True,
        "isClaimant": True,
    }
    assert (await gateway.data(VERIFY, {"c": code, "d": BOB}))["verifyProduct"] == {
        "claimed": True,
        "isClaimant": False,
    }
    assert (await gateway.data(VERIFY, {"c": code, "d": None}))["verifyProduct"] == {
        "claimed": True,
        "isClaimant": False,
    }
    assert (await gateway.data(VERIFICATION, {"c": code, "d": ALICE}))["verification"][
        "isClaimant"
    ] is True
    owner_view = await gateway.data(PRODUCT_CLAIM_QUERY, {"p": product["id"]}, key=brand.key)
    assert owner_view["product"]["claim"] == made
    item = await stored_claim(gateway, product["id"])
    assert item is not None and item["deviceHash"] == hash_device_fingerprint(SALT, ALICE)
    assert ALICE not in str(item)
    audit = await gateway.execute(
        "{ auditLog(days: 1) { action actorRole targetIds } }", key=gateway.admin_key
    )
    seen = str([owner_view, before, made, audit])
    assert ALICE not in seen and item["deviceHash"] not in seen
    assert {
        "action": "claimProduct",
        "actorRole": "ANONYMOUS",
        "targetIds": [product["id"]],
    } in audit["data"]["auditLog"]


async def test_product_claim_is_for_the_brand_only(gateway) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    other = await gateway.register_brand()
    partner = await gateway.create_key(brand, "PARTNER")
    await claim(gateway, product["verificationCode"], ALICE)
    query = "query($c: String!) { productByCode(code: $c) { id claim { claimedAt } } }"
    for key, code in ((None, "UNAUTHENTICATED"), (other.key, "FORBIDDEN")):
        body = await gateway.execute(query, {"c": product["verificationCode"]}, key=key)
        assert gateway.codes(body) == [code]
        assert body["data"]["productByCode"] == {"id": product["id"], "claim": None}
    assert (await gateway.data(query, {"c": product["verificationCode"]}, key=partner))[
        "productByCode"
    ]["claim"]
    foreign = await gateway.execute(PRODUCT_CLAIM_QUERY, {"p": product["id"]}, key=other.key)
    assert gateway.codes(foreign) == ["NOT_FOUND"]


async def test_an_expired_claim_is_gone_and_can_be_replaced(
    gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    code = product["verificationCode"]
    await claim(gateway, code, ALICE)
    services = services_of(gateway)
    later = datetime.now(UTC) + CLAIM_TTL_DEFAULT + timedelta(seconds=2)
    monkeypatch.setattr(services, "clock", lambda: later)
    assert (await gateway.data(VERIFICATION, {"c": code, "d": ALICE}))["verification"] == {
        "claimed": False,
        "isClaimant": False,
    }
    assert (await gateway.data(PRODUCT_CLAIM_QUERY, {"p": product["id"]}, key=brand.key))[
        "product"
    ]["claim"] is None
    assert gateway.codes(await dispute(gateway, code, BOB)) == ["BAD_USER_INPUT"]
    replaced = await claim(gateway, code, BOB)
    assert "errors" not in replaced
    assert (await gateway.data(VERIFICATION, {"c": code, "d": BOB}))["verification"] == {
        "claimed": True,
        "isClaimant": True,
    }
    item = await stored_claim(gateway, product["id"])
    assert item is not None and item["disputeCount"] == 0


async def test_disputes_are_counted_against_the_active_claim(gateway) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    code = product["verificationCode"]
    unclaimed = await dispute(gateway, code, BOB)
    assert gateway.codes(unclaimed) == ["BAD_USER_INPUT"]
    assert "no active claim" in unclaimed["errors"][0]["message"]
    made = (await claim(gateway, code, ALICE))["data"]["claimProduct"]
    assert gateway.codes(await dispute(gateway, code, ALICE)) == ["BAD_USER_INPUT"]
    for expected in (1, 2):
        body = await dispute(gateway, code, BOB, reason=f"Receipt #{expected}")
        assert body["data"]["disputeClaim"] == made
        item = await stored_claim(gateway, product["id"])
        assert item is not None and item["disputeCount"] == expected
    assert ALICE not in str(body) and BOB not in str(body)
    entries = (
        await gateway.data("{ auditLog(days: 1) { action targetIds } }", key=gateway.admin_key)
    )["auditLog"]
    assert [e["action"] for e in entries if product["id"] in e["targetIds"]].count(
        "disputeClaim"
    ) == 2


async def test_unknown_codes_and_bad_input(gateway) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    code = product["verificationCode"]
    assert gateway.codes(await claim(gateway, "ABCD-EFGH-JKMN", ALICE)) == ["NOT_FOUND"]
    assert gateway.codes(await dispute(gateway, "garbage", BOB)) == ["NOT_FOUND"]
    for device in ("", "d" * 257):
        body = await claim(gateway, code, device)
        assert gateway.codes(body) == ["BAD_USER_INPUT"]
        assert body["errors"][0]["message"].startswith("deviceFingerprint:")
    await claim(gateway, code, ALICE)
    for reason in ("", "r" * 1001):
        body = await dispute(gateway, code, BOB, reason=reason)
        assert gateway.codes(body) == ["BAD_USER_INPUT"]
        assert body["errors"][0]["message"].startswith("reason:")
    item = await stored_claim(gateway, product["id"])
    assert item is not None and item["disputeCount"] == 0


async def test_concurrent_claims_have_exactly_one_winner(gateway) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    devices = [f"device-{n}" for n in range(8)]
    bodies = await asyncio.gather(
        *(claim(gateway, product["verificationCode"], d) for d in devices)
    )
    winners = [d for d, b in zip(devices, bodies, strict=True) if "errors" not in b]
    assert len(winners) == 1
    assert sorted(code for b in bodies for code in gateway.codes(b)) == ["CONFLICT"] * 7
    item = await stored_claim(gateway, product["id"])
    assert item is not None and item["deviceHash"] == hash_device_fingerprint(SALT, winners[0])


async def test_a_stranger_is_warned_of_a_cloned_tag_and_the_claimant_is_not(gateway) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    code = product["verificationCode"]
    unclaimed = (await gateway.data(VERDICT, {"c": code, "d": BOB}))["verifyProduct"]
    assert (unclaimed["result"], unclaimed["warnings"]) == ("AUTHENTIC", [])
    await claim(gateway, code, ALICE)
    own = (await gateway.data(VERDICT, {"c": code, "d": ALICE}))["verifyProduct"]
    assert own == {
        "authentic": True,
        "result": "AUTHENTIC",
        "claimed": True,
        "isClaimant": True,
        "warnings": [],
    }
    for device in (BOB, None):
        stranger = (await gateway.data(VERDICT, {"c": code, "d": device}))["verifyProduct"]
        assert stranger["authentic"] is False
        assert stranger["result"] == "SUSPICIOUS"
        assert (stranger["claimed"], stranger["isClaimant"]) == (True, False)
        [warning] = stranger["warnings"]
        assert "registered to another consumer" in warning and "cloned tag" in warning
    read_only = VERIFICATION.replace("isClaimant", "result")
    assert (await gateway.data(read_only, {"c": code, "d": BOB}))["verification"] == {
        "claimed": True,
        "result": "SUSPICIOUS",
    }
    scans = await gateway.data(SCANS, {"p": product["id"]}, key=brand.key)
    results = sorted(edge["node"]["result"] for edge in scans["product"]["scans"]["edges"])
    assert results == ["AUTHENTIC", "AUTHENTIC", "SUSPICIOUS", "SUSPICIOUS"]
