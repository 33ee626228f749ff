"""Threat alerts end to end through GraphQL: commands enqueue, the app's relay
raises the alerts, the API reads and resolves them. The rules run on both
backends; the read paths, which the conformance suite already proves alike on
both, run on SQLite."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from domain.datetimes import format_datetime

Gateway = Any
Brand = Any


def error_codes(body: dict[str, Any]) -> list[str]:
    return [error["extensions"]["code"] for error in body.get("errors", [])]


VERIFY = """mutation($code: String!, $scan: ScanInput) {
    verifyProduct(code: $code, scan: $scan) { result }
}"""
CLAIM = """mutation($code: String!, $device: String!) {
    claimProduct(code: $code, deviceFingerprint: $device) { claimedAt }
}"""
DISPUTE = """mutation($code: String!) {
    disputeClaim(code: $code, deviceFingerprint: "mallory", reason: "That is mine") { claimedAt }
}"""
RECALL = """mutation($id: ID!) { recallProduct(productId: $id, reason: "Lead paint") { status } }"""
APPEND = """mutation($id: ID!, $at: DateTime) {
    addProvenanceEvent(productId: $id, input: {type: SHIPPED, occurredAt: $at}) { sequence }
}"""
THREATS = """query($id: ID!, $first: Int, $after: String, $since: DateTime, $min: Severity) {
    brand(id: $id) {
        stats { threatCount openThreatCount }
        threats(first: $first, after: $after, since: $since, minSeverity: $min) {
            edges {
                cursor
                node {
                    id cursor type severity details detectedAt resolved product { id } brand { id }
                }
            }
            pageInfo { hasNextPage endCursor }
        }
    }
}"""
THREAT = "query($id: ID!) { threat(id: $id) { id type resolved resolvedAt } }"
RESOLVE = "mutation($id: ID!) { resolveThreat(id: $id) { id resolved resolvedAt } }"


async def threats(
    gateway: Gateway, brand: Brand, key: str | None = None, **variables: Any
) -> dict[str, Any]:
    data = await gateway.data(THREATS, {"id": brand.id, **variables}, key=key or brand.key)
    result: dict[str, Any] = data["brand"]
    return result


async def settled(gateway: Gateway, brand: Brand, count: int) -> dict[str, Any]:
    """The brand once the relay has worked through the outbox: its alerts are
    final, so exactly ``count`` means no more will come."""
    await gateway.drained()
    result = await threats(gateway, brand, first=100)
    assert result["stats"]["threatCount"] == count
    assert len(result["threats"]["edges"]) == count
    return result


def types_of(result: dict[str, Any]) -> list[str]:
    return sorted(edge["node"]["type"] for edge in result["threats"]["edges"])


async def scan(gateway: Gateway, code: str, **scan: Any) -> str:
    data = await gateway.data(VERIFY, {"code": code, "scan": scan})
    result: str = data["verifyProduct"]["result"]
    return result


@pytest.fixture(params=["sqlite", "dynamodb"])
def rules_gateway(request: pytest.FixtureRequest) -> Gateway:
    """On DynamoDB a table of its own: moto copies the whole table for every
    action of a transaction, and the relay adds several per scan."""
    name = "sqlite_gateway" if request.param == "sqlite" else "fresh_dynamodb_gateway"
    return request.getfixturevalue(name)


async def test_every_rule_raises_its_alert_through_the_pipeline(rules_gateway: Gateway) -> None:
    gateway = rules_gateway
    brand = await gateway.register_brand()
    attacked, claimed, shipped = [await gateway.register_product(brand) for _ in range(3)]
    for index in range(21):
        await scan(gateway, attacked["verificationCode"], country=("DE", "FR", "US")[index % 3])
    await gateway.data(CLAIM, {"code": claimed["verificationCode"], "device": "alice"})
    await scan(gateway, claimed["verificationCode"], deviceFingerprint="alice")
    await scan(gateway, claimed["verificationCode"], deviceFingerprint="mallory")
    await gateway.data(DISPUTE, {"code": claimed["verificationCode"]})
    await gateway.data(RECALL, {"id": claimed["id"]}, key=brand.key)
    assert (
        await scan(gateway, claimed["verificationCode"], deviceFingerprint="alice") == "SUSPICIOUS"
    )
    now = datetime.now(UTC)
    await gateway.data(
        APPEND,
        {"id": shipped["id"], "at": format_datetime(now - timedelta(hours=73))},
        key=brand.key,
    )
    await gateway.data(APPEND, {"id": shipped["id"], "at": format_datetime(now)}, key=brand.key)

    result = await settled(gateway, brand, 8)
    assert types_of(result) == [
        "BURST_SCAN",
        "CHAIN_GAP",
        "CLAIMED_PRODUCT_SCAN",
        "GEOGRAPHIC_ANOMALY",
        "OWNERSHIP_DISPUTE",
        "PRODUCT_RECALL",
        "RECALLED_PRODUCT_SCAN",
        "SCAN_VELOCITY",
    ]
    assert result["stats"] == {"threatCount": 8, "openThreatCount": 8}
    by_type = {edge["node"]["type"]: edge["node"] for edge in result["threats"]["edges"]}
    assert by_type["GEOGRAPHIC_ANOMALY"]["product"]["id"] == attacked["id"]
    assert by_type["GEOGRAPHIC_ANOMALY"]["details"]["countries"] == ["DE", "FR", "US"]
    assert by_type["CHAIN_GAP"]["product"]["id"] == shipped["id"]
    assert "alice" not in str(result) and "mallory" not in str(result)
    assert {node["brand"]["id"] for node in by_type.values()} == {brand.id}


async def disputes(gateway: Gateway, brand: Brand, count: int) -> list[dict[str, Any]]:
    """``count`` OWNERSHIP_DISPUTE alerts (CRITICAL), a PRODUCT_RECALL (CRITICAL)
    and a RECALLED_PRODUCT_SCAN (LOW), each raised before the next command."""
    product = await gateway.register_product(brand)
    code = product["verificationCode"]
    await gateway.data(CLAIM, {"code": code, "device": "alice"})
    for index in range(count):
        await gateway.data(DISPUTE, {"code": code})
        await settled(gateway, brand, index + 1)
    await gateway.data(RECALL, {"id": product["id"]}, key=brand.key)
    await settled(gateway, brand, count + 1)
    await scan(gateway, code, deviceFingerprint="alice")
    result = await settled(gateway, brand, count + 2)
    edges: list[dict[str, Any]] = result["threats"]["edges"]
    return edges


async def test_threats_page_newest_first_and_filter_by_severity_and_time(
    sqlite_gateway: Gateway,
) -> None:
    gateway = sqlite_gateway
    brand = await gateway.register_brand()
    edges = await disputes(gateway, brand, 4)
    detected = [edge["node"]["detectedAt"] for edge in edges]
    assert detected == sorted(detected, reverse=True)
    assert edges[0]["node"]["type"] == "RECALLED_PRODUCT_SCAN"
    after_second = (await threats(gateway, brand, first=1, after=edges[1]["node"]["cursor"]))[
        "threats"
    ]
    assert [edge["node"]["id"] for edge in after_second["edges"]] == [edges[2]["node"]["id"]]

    seen: list[str] = []
    after = None
    while True:
        page = (await threats(gateway, brand, first=2, after=after, min="CRITICAL"))["threats"]
        seen += [edge["node"]["id"] for edge in page["edges"]]
        assert all(edge["node"]["severity"] == "CRITICAL" for edge in page["edges"])
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    assert seen == [edge["node"]["id"] for edge in edges if edge["node"]["severity"] == "CRITICAL"]
    assert len(seen) == 5

    middle = edges[2]["node"]["detectedAt"]
    recent = (await threats(gateway, brand, first=100, since=middle))["threats"]["edges"]
    assert [edge["node"]["id"] for edge in recent] == [edge["node"]["id"] for edge in edges[:3]]


async def test_resolving_a_threat_lowers_the_open_count_once(sqlite_gateway: Gateway) -> None:
    gateway = sqlite_gateway
    brand = await gateway.register_brand()
    edges = await disputes(gateway, brand, 1)
    alert_id = edges[-1]["node"]["id"]
    first = (await gateway.data(RESOLVE, {"id": alert_id}, key=brand.key))["resolveThreat"]
    again = (await gateway.data(RESOLVE, {"id": alert_id}, key=brand.key))["resolveThreat"]
    assert first["resolved"] and first == again
    stats = (await threats(gateway, brand))["stats"]
    assert stats == {"threatCount": 3, "openThreatCount": 2}
    read = (await gateway.data(THREAT, {"id": alert_id}, key=brand.key))["threat"]
    assert read == {
        "id": alert_id,
        "type": "OWNERSHIP_DISPUTE",
        "resolved": True,
        "resolvedAt": first["resolvedAt"],
    }


async def test_other_brands_keys_never_reach_a_threat(sqlite_gateway: Gateway) -> None:
    gateway = sqlite_gateway
    owner, stranger = await gateway.register_brand(), await gateway.register_brand()
    partner = await gateway.create_key(owner, "PARTNER")
    alert_id = (await disputes(gateway, owner, 1))[-1]["node"]["id"]
    for query in (THREAT, RESOLVE):
        body = await gateway.execute(query, {"id": alert_id}, key=stranger.key)
        assert error_codes(body) == ["NOT_FOUND"]
        assert owner.id not in str(body["errors"])
    assert error_codes(await gateway.execute(THREAT, {"id": alert_id})) == ["UNAUTHENTICATED"]
    assert error_codes(await gateway.execute(RESOLVE, {"id": alert_id}, key=partner)) == [
        "FORBIDDEN"
    ]
    assert (await gateway.data(THREAT, {"id": alert_id}, key=partner))["threat"]["id"] == alert_id
    assert error_codes(await gateway.execute(THREATS, {"id": owner.id}, key=stranger.key)) == [
        "NOT_FOUND"
    ]
    bogus = await gateway.execute(THREAT, {"id": "thr_not-an-id"}, key=owner.key)
    assert error_codes(bogus) == ["BAD_USER_INPUT"]
    foreign_cursor = (await threats(gateway, owner, first=1))["threats"]["pageInfo"]["endCursor"]
    page = await gateway.execute(THREATS, {"id": owner.id, "after": foreign_cursor}, key=partner)
    assert "errors" not in page, "partner keys share their brand's cursors"
    stranger_page = await gateway.execute(
        THREATS, {"id": stranger.id, "after": foreign_cursor}, key=stranger.key
    )
    assert error_codes(stranger_page) == ["BAD_USER_INPUT"]
