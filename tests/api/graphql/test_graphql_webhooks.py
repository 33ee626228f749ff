"""Webhooks through GraphQL: registration rules in-process, and deliveries from
a real gateway process to a receiver on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from _live import RECALL, VERIFY, Gateway

from domain.webhooks import verify_signature
from tests._support.receiver import Receiver, Request
from tests._support.standard_webhooks import Delivery, node_verifier, python_verifies

REGISTER = """mutation($b: ID!, $url: String!, $min: Severity!, $types: [ThreatType!]) {
    registerWebhook(brandId: $b, url: $url, minSeverity: $min, types: $types) {
        secret webhook { id url minSeverity types createdAt }
    }
}"""
DELETE = "mutation($id: ID!) { deleteWebhook(id: $id) { id url } }"
WEBHOOKS = """query($b: ID!) {
    brand(id: $b) {
        webhooks { id url minSeverity types }
        webhookDeliveries(first: 50) {
            edges { node { id webhookId alertId status attempts lastStatusCode } }
        }
    }
}"""


def codes(body: dict[str, Any]) -> list[str]:
    return [error["extensions"]["code"] for error in body.get("errors", [])]


def register(
    url: str, brand: str, min_severity: str = "LOW", types: list[str] | None = None
) -> dict[str, Any]:
    return {"b": brand, "url": url, "min": min_severity, "types": types}


async def test_registration_is_for_the_brands_own_brand_keys(sqlite_gateway: Any) -> None:
    gateway = sqlite_gateway
    brand, stranger = await gateway.register_brand(), await gateway.register_brand()
    partner = await gateway.create_key(brand, "PARTNER")
    url = "https://hooks.example.com/proofgate"
    payload = (
        await gateway.data(REGISTER, register(url, brand.id, "HIGH", ["BURST_SCAN"]), key=brand.key)
    )["registerWebhook"]
    assert payload["secret"].startswith("whsec_")
    assert (
        payload["webhook"]["types"] == ["BURST_SCAN"]
        and payload["webhook"]["minSeverity"] == "HIGH"
    )
    listed = (await gateway.data(WEBHOOKS, {"b": brand.id}, key=brand.key))["brand"]
    assert listed["webhooks"] == [
        {k: payload["webhook"][k] for k in ("id", "url", "minSeverity", "types")}
    ]
    assert payload["secret"] not in json.dumps(listed)

    assert codes(await gateway.execute(REGISTER, register(url, brand.id), key=partner)) == [
        "FORBIDDEN"
    ]
    assert codes(await gateway.execute(REGISTER, register(url, brand.id), key=stranger.key)) == [
        "NOT_FOUND"
    ]
    partner_view = await gateway.execute(WEBHOOKS, {"b": brand.id}, key=partner)
    assert partner_view["data"]["brand"]["webhooks"] is None and "FORBIDDEN" in codes(partner_view)
    for bad in (
        "ftp://hooks.example.com/x",
        "http://user:pw@hooks.example.com/",
        "http://127.0.0.1:9/x",
        "http://localhost/x",
        "http://[64:ff9b::a9fe:a9fe]/x",
        "http://[2002:a9fe:a9fe::1]/x",
        "http://[ff02::1]/x",
        "http://224.0.0.1/x",
    ):
        assert codes(await gateway.execute(REGISTER, register(bad, brand.id), key=brand.key)) == [
            "BAD_USER_INPUT"
        ], bad
    assert codes(
        await gateway.execute(REGISTER, {**register(url, brand.id), "types": []}, key=brand.key)
    ) == ["BAD_USER_INPUT"]

    hook_id = payload["webhook"]["id"]
    assert codes(await gateway.execute(DELETE, {"id": hook_id}, key=stranger.key)) == ["NOT_FOUND"]
    assert codes(await gateway.execute(DELETE, {"id": hook_id}, key=partner)) == ["FORBIDDEN"]
    assert (await gateway.data(DELETE, {"id": hook_id}, key=brand.key))["deleteWebhook"][
        "id"
    ] == hook_id
    assert codes(await gateway.execute(DELETE, {"id": hook_id}, key=brand.key)) == ["NOT_FOUND"]
    assert codes(await gateway.execute(DELETE, {"id": "wh_nonsense"}, key=brand.key)) == [
        "BAD_USER_INPUT"
    ]
    assert (await gateway.data(WEBHOOKS, {"b": brand.id}, key=brand.key))["brand"]["webhooks"] == []


async def test_a_brand_has_a_bounded_number_of_webhooks(sqlite_gateway: Any) -> None:
    gateway = sqlite_gateway
    brand = await gateway.register_brand()
    for index in range(10):
        await gateway.data(
            REGISTER, register(f"https://hooks.example.com/{index}", brand.id), key=brand.key
        )
    refused = await gateway.execute(
        REGISTER, register("https://hooks.example.com/x", brand.id), key=brand.key
    )
    assert codes(refused) == ["BAD_USER_INPUT"]


@pytest.fixture
async def gateway(tmp_path: Path) -> AsyncIterator[Gateway]:
    served = await Gateway(tmp_path).start()
    yield served
    await served.stop()


def fails_once(request: Request, attempt: int) -> int:
    return 500 if attempt == 1 else 200


@pytest.mark.slow
async def test_alerts_are_delivered_signed_with_retries_and_listed(gateway: Gateway) -> None:
    brand, key = await gateway.brand()
    async with Receiver(fails_once) as receiver:
        registered = await gateway.data(REGISTER, register(receiver.url, brand, "CRITICAL"), key)
        secret = registered["registerWebhook"]["secret"]
        product = await gateway.product(brand, key, claimed=True)
        await gateway.dispute(product)
        await gateway.dispute(product)
        await gateway.data(RECALL, {"id": product["id"]}, key)
        await gateway.data(
            VERIFY, {"code": product["verificationCode"], "scan": {"deviceFingerprint": "alice"}}
        )
        deadline = time.monotonic() + 10
        while True:
            brand_view = (await gateway.data(WEBHOOKS, {"b": brand}, key))["brand"]
            records = [edge["node"] for edge in brand_view["webhookDeliveries"]["edges"]]
            if len(records) == 3 and all(r["status"] == "DELIVERED" for r in records):
                break
            assert time.monotonic() < deadline, records
            await asyncio.sleep(0.05)

    alerts = await gateway.alerts(brand, key)
    critical = {alert["id"] for alert in alerts if alert["severity"] == "CRITICAL"}
    assert len(critical) == 3 and len(alerts) == 4
    assert {record["alertId"] for record in records} == critical
    assert all((record["attempts"], record["lastStatusCode"]) == (2, 200) for record in records)
    delivered = receiver.delivered()
    assert len(delivered) == 3 and len(receiver.requests) == 6
    delivered_ids = [request.headers["x-proofgate-delivery"] for request in delivered]
    assert sorted(delivered_ids) == sorted(record["id"] for record in records), (
        "no duplicate delivery ids"
    )
    now = datetime.now(UTC)
    for request in receiver.requests:
        assert verify_signature(
            secret, request.headers["x-proofgate-signature"], request.body, now=now
        )
        assert request.headers["x-proofgate-event"] == "threat.alert"
    assert {json.loads(request.body)["alert"]["id"] for request in delivered} == critical


FILTERED = """mutation($b: ID!, $url: String!, $filter: AlertFilterInput) {
    registerWebhook(brandId: $b, url: $url, filter: $filter) {
        webhook { id filter { productIds countries types severities } }
    }
}"""


async def test_a_webhook_filter_is_checked_at_registration(sqlite_gateway: Any) -> None:
    gateway = sqlite_gateway
    brand, stranger = await gateway.register_brand(), await gateway.register_brand()
    mine = await gateway.register_product(brand)
    theirs = await gateway.register_product(stranger)
    url = "https://hooks.example.com/filtered"
    for bad, message in (
        ({"productIds": [mine["id"], theirs["id"]]}, f"{theirs['id']} is not a product of brand"),
        ({"productIds": ["01JD8X3V9Q7ZK5M2N4P6R8T0W1"]}, "is not a product of brand"),
        ({"productIds": [mine["id"]] * 1_001}, "at most 1,000 values"),
        ({"countries": ["de"]}, "ISO 3166-1 alpha-2"),
    ):
        body = await gateway.execute(
            FILTERED, {"b": brand.id, "url": url, "filter": bad}, key=brand.key
        )
        assert codes(body) == ["BAD_USER_INPUT"], bad
        assert message in body["errors"][0]["message"]
    assert (await gateway.data(WEBHOOKS, {"b": brand.id}, key=brand.key))["brand"]["webhooks"] == []
    wanted = {"productIds": [mine["id"]], "countries": ["FR", "DE"], "severities": ["HIGH"]}
    registered = await gateway.data(
        FILTERED, {"b": brand.id, "url": url, "filter": wanted}, key=brand.key
    )
    assert registered["registerWebhook"]["webhook"]["filter"] == {
        "productIds": [mine["id"]],
        "countries": ["DE", "FR"],
        "types": None,
        "severities": ["HIGH"],
    }


def always_ok(request: Request, attempt: int) -> int:
    return 200


@pytest.mark.slow
async def test_a_filtered_webhook_gets_only_the_alerts_its_filter_admits(gateway: Gateway) -> None:
    brand, key = await gateway.brand()
    watched = await gateway.product(brand, key, claimed=True)
    other = await gateway.product(brand, key, claimed=True)
    async with Receiver(always_ok) as receiver:
        wanted = {"productIds": [watched["id"]], "types": ["OWNERSHIP_DISPUTE"]}
        await gateway.data(FILTERED, {"b": brand, "url": receiver.url, "filter": wanted}, key)
        await gateway.dispute(other)
        await gateway.dispute(watched)
        await gateway.data(RECALL, {"id": watched["id"]}, key)
        await gateway.dispute(watched)
        # Deliveries are written with their alert, so once all four alerts are
        # stored the delivery records are complete.
        alerts = await gateway.wait_for_alerts(brand, key, 4)
        deadline = time.monotonic() + 10
        while len(receiver.delivered()) < 2:
            assert time.monotonic() < deadline, receiver.requests
            await asyncio.sleep(0.05)
    records = (await gateway.data(WEBHOOKS, {"b": brand}, key))["brand"]["webhookDeliveries"]
    disputes = {a["id"] for a in alerts if a["type"] == "OWNERSHIP_DISPUTE"}
    delivered = {json.loads(r.body)["alert"]["id"] for r in receiver.delivered()}
    assert {json.loads(r.body)["alert"]["productId"] for r in receiver.delivered()} == {
        watched["id"]
    }
    assert len(delivered) == 2 and delivered < disputes
    assert {edge["node"]["alertId"] for edge in records["edges"]} == delivered


ROTATE = """mutation($id: ID!, $keep: Int) {
    rotateWebhookSecret(id: $id, keepPreviousSeconds: $keep) {
        secret webhook { id previousSecretExpiresAt }
    }
}"""
LEGACY = """mutation($id: ID!, $on: Boolean!) {
    setWebhookLegacySignature(id: $id, enabled: $on) { id legacySignature }
}"""


async def _next_delivery(gateway: Gateway, receiver: Receiver, product: dict[str, str]) -> Request:
    count = len(receiver.delivered())
    await gateway.dispute(product)
    deadline = time.monotonic() + 10
    while len(receiver.delivered()) == count:
        assert time.monotonic() < deadline, receiver.requests
        await asyncio.sleep(0.05)
    return receiver.delivered()[-1]


@pytest.mark.slow
async def test_rotated_secrets_sign_side_by_side_and_the_legacy_header_can_be_turned_off(
    gateway: Gateway,
) -> None:
    node = node_verifier()
    brand, key = await gateway.brand()
    product = await gateway.product(brand, key, claimed=True)
    async with Receiver(always_ok) as receiver:
        registered = (await gateway.data(REGISTER, register(receiver.url, brand), key))[
            "registerWebhook"
        ]
        hook, first_secret = registered["webhook"]["id"], registered["secret"]
        for keep in (-1, 7 * 86_400 + 1):
            refused = await gateway.execute(ROTATE, {"id": hook, "keep": keep}, key)
            assert codes(refused) == ["BAD_USER_INPUT"], refused
        before = await _next_delivery(gateway, receiver, product)

        rotated = (await gateway.data(ROTATE, {"id": hook, "keep": 3600}, key))[
            "rotateWebhookSecret"
        ]
        second_secret = rotated["secret"]
        assert rotated["webhook"]["previousSecretExpiresAt"] is not None
        during = await _next_delivery(gateway, receiver, product)

        third_secret = (await gateway.data(ROTATE, {"id": hook, "keep": 0}, key))[
            "rotateWebhookSecret"
        ]["secret"]
        after = await _next_delivery(gateway, receiver, product)

        turned_off = await gateway.data(LEGACY, {"id": hook, "on": False}, key)
        assert turned_off["setWebhookLegacySignature"]["legacySignature"] is False
        standard_only = await _next_delivery(gateway, receiver, product)

    assert len({first_secret, second_secret, third_secret}) == 3
    assert len(during.headers["webhook-signature"].split(" ")) == 2
    cases = [
        (before, first_secret, None),
        (during, first_secret, None),
        (during, second_secret, None),
        (after, third_secret, None),
        (after, second_secret, "No matching signature found"),
        (after, first_secret, "No matching signature found"),
        (standard_only, third_secret, None),
    ]
    deliveries = [Delivery(secret, r.headers, r.body) for r, secret, _ in cases]
    expected = [outcome for _, _, outcome in cases]
    assert [python_verifies(d) for d in deliveries] == expected
    assert node.verify(deliveries) == expected
    now = datetime.now(UTC)
    legacy = during.headers["x-proofgate-signature"]
    assert verify_signature(first_secret, legacy, during.body, now=now)
    assert verify_signature(second_secret, legacy, during.body, now=now)
    assert "x-proofgate-signature" in after.headers
    assert "x-proofgate-signature" not in standard_only.headers
    ids = [r.headers["webhook-id"] for r in (before, during, after, standard_only)]
    assert len(set(ids)) == 4


SELECTING = """mutation($b: ID!, $url: String!, $document: String) {
    registerWebhook(brandId: $b, url: $url, document: $document) { webhook { id document } }
}"""
SELECTION = """subscription Delivered($brand: ID!) {
    threatAlerts(brandId: $brand) { id type product { id name } brand { id } }
}"""


@pytest.mark.slow
async def test_a_webhook_with_a_document_delivers_its_selection_with_retries(
    gateway: Gateway,
) -> None:
    brand, key = await gateway.brand()
    other, _ = await gateway.brand()
    product = await gateway.product(brand, key, claimed=True)
    async with Receiver(fails_once) as receiver:
        foreign = f'subscription {{ threatAlerts(brandId: "{other}") {{ id }} }}'
        refused = await gateway.execute(
            SELECTING, {"b": brand, "url": receiver.url, "document": foreign}, key
        )
        assert codes(refused) == ["BAD_USER_INPUT"], refused
        assert f"brandId must be {brand}" in refused["errors"][0]["message"]
        registered = await gateway.data(
            SELECTING, {"b": brand, "url": receiver.url, "document": SELECTION}, key
        )
        assert registered["registerWebhook"]["webhook"]["document"] == SELECTION
        listed = (await gateway.data(WEBHOOKS, {"b": brand}, key))["brand"]["webhooks"]
        assert len(listed) == 1, "the refused registration left nothing"
        secret = (await gateway.data(ROTATE, {"id": listed[0]["id"], "keep": 0}, key))[
            "rotateWebhookSecret"
        ]["secret"]
        await gateway.dispute(product)
        deadline = time.monotonic() + 10
        while not receiver.delivered():
            assert time.monotonic() < deadline, receiver.requests
            await asyncio.sleep(0.05)
    (alert,) = await gateway.alerts(brand, key)
    first, retry = receiver.requests
    assert receiver.answered == [500, 200]
    assert first.headers["webhook-id"] == retry.headers["webhook-id"]
    body = json.loads(retry.body)
    assert "alert" not in body and "errors" not in body
    assert body["data"] == {
        "threatAlerts": {
            "id": alert["id"],
            "type": "OWNERSHIP_DISPUTE",
            "product": {
                "id": product["id"],
                "name": body["data"]["threatAlerts"]["product"]["name"],
            },
            "brand": {"id": brand},
        }
    }
    assert json.loads(first.body)["data"] == body["data"]
    assert python_verifies(Delivery(secret, retry.headers, retry.body)) is None
