"""``POST /ingest/<source>`` through a real ASGI client, on each backend: a
partner that can only send signed webhooks."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import pytest
from _ingest import CHAIN, INGEST, INTEGRATIONS, REVOKE, create_integration, post_signed
from _limits import serve

from api.http.ingest import INGEST_BODY_MAX_BYTES, REPLAYED_HEADER
from api.settings.limits import Limits, Rate
from domain.ingest import REPLAY_WINDOW_SECONDS, signature_header


def shipment(product_id: str, event_id: str | None = None, **fields: Any) -> dict[str, Any]:
    return {
        "eventId": event_id or f"evt-{uuid.uuid4().hex}",
        "productId": product_id,
        "type": "RECEIVED",
        "actor": "Depot 4",
        "location": "Venlo, NL",
        "latitude": 51.37,
        "longitude": 6.17,
        **fields,
    }


async def chain_length(gateway: Any, product_id: str, key: str) -> int:
    data = await gateway.data(CHAIN, {"p": product_id}, key=key)
    return len(data["product"]["provenance"]["edges"])


def refusal(response: Any) -> dict[str, Any]:
    [error] = response.json()["errors"]
    extensions: dict[str, Any] = error["extensions"]
    return extensions


async def test_a_signed_post_appends_once_and_a_replay_answers_the_same(gateway: Any) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    integration, key = await create_integration(gateway, brand, "WAREHOUSE")
    body = shipment(product["id"], data={"bay": 12})
    first = await post_signed(gateway.http, "warehouse", integration["id"], key, body)
    assert first.status_code == 200, first.text
    assert REPLAYED_HEADER.lower() not in first.headers
    receipt = first.json()
    assert receipt["integrationId"] == integration["id"] and receipt["eventId"] == body["eventId"]
    event = receipt["event"]
    assert event["source"] == "WAREHOUSE" and event["sequence"] == 1
    assert (event["latitude"], event["longitude"]) == ("51.37", "6.17")
    assert event["previousHash"] == product["certificate"]["hash"]

    replay = await post_signed(gateway.http, "warehouse", integration["id"], key, body)
    assert replay.status_code == 200 and replay.headers[REPLAYED_HEADER] == "true"
    assert replay.json() == receipt
    assert await chain_length(gateway, product["id"], brand.key) == 1
    stored = (await gateway.data(CHAIN, {"p": product["id"]}, key=brand.key))["product"]
    assert stored["provenance"]["edges"][0]["node"]["hash"] == event["hash"]
    assert stored["certificate"]["chainHead"] == event["hash"]

    # The same event id through GraphQL is the same event.
    graphql_body = {**body, "latitude": 51.37, "longitude": 6.17}
    via_graphql = (await gateway.data(INGEST, {"input": graphql_body}, key=key))["ingestEvent"]
    assert via_graphql["event"]["hash"] == event["hash"]
    listed = await gateway.data(INTEGRATIONS, {"b": brand.id}, key=brand.key)
    assert listed["brand"]["integrations"]["edges"][0]["node"]["eventCount"] == 1


@pytest.mark.parametrize(
    ("tamper", "reason"),
    [
        ("signature", "BAD_SIGNATURE"),
        ("body", "BAD_SIGNATURE"),
        ("other-key", "BAD_SIGNATURE"),
        ("stale", "STALE_SIGNATURE"),
        ("future", "STALE_SIGNATURE"),
        ("malformed", "MALFORMED_SIGNATURE"),
        ("unknown", "UNKNOWN_INTEGRATION"),
        ("no-integration", "UNKNOWN_INTEGRATION"),
    ],
)
async def test_a_request_not_signed_by_the_integrations_key_appends_nothing(
    gateway: Any, tamper: str, reason: str
) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    integration, key = await create_integration(gateway, brand)
    other, other_key = await create_integration(gateway, brand)
    body = shipment(product["id"], type="SHIPPED")
    raw = json.dumps(body).encode()
    now = int(time.time())
    options: dict[str, Any] = {}
    integration_id: str | None = integration["id"]
    if tamper == "signature":
        options["signature"] = f"t={now},v1={'0' * 64}"
    elif tamper == "body":
        options["signature"] = signature_header(key, now, raw)
        raw = raw.replace(b"Depot 4", b"Depot 5")
    elif tamper == "other-key":
        options["signature"] = signature_header(other_key, now, raw)
    elif tamper in ("stale", "future"):
        offset = REPLAY_WINDOW_SECONDS + 5
        options["timestamp"] = now - offset if tamper == "stale" else now + offset
    elif tamper == "malformed":
        options["signature"] = "v1=abc"
    elif tamper == "unknown":
        integration_id = other["id"][:-1] + ("0" if other["id"][-1] != "0" else "1")
    else:
        integration_id = None
    response = await post_signed(gateway.http, "shipping", integration_id, key, raw, **options)
    assert response.status_code == 401, response.text
    assert refusal(response)["code"] == "UNAUTHENTICATED"
    assert refusal(response)["reason"] == reason
    assert await chain_length(gateway, product["id"], brand.key) == 0
    # The positive control: the same request, signed now with the right key, appends.
    signed = await post_signed(gateway.http, "shipping", integration["id"], key, body)
    assert signed.status_code == 200, signed.text
    assert await chain_length(gateway, product["id"], brand.key) == 1


async def test_revoked_wrong_source_and_foreign_products_are_refused(gateway: Any) -> None:
    brand, other = await gateway.register_brand(), await gateway.register_brand()
    product = await gateway.register_product(brand)
    foreign = await gateway.register_product(other)
    integration, key = await create_integration(gateway, brand)
    wrong_source = await post_signed(
        gateway.http, "pos", integration["id"], key, shipment(product["id"])
    )
    assert wrong_source.status_code == 403 and refusal(wrong_source)["code"] == "FORBIDDEN"
    for target in (foreign, {"id": "01JD8X3V9Q7ZK5M2N4P6R8T0W1"}):
        response = await post_signed(
            gateway.http, "shipping", integration["id"], key, shipment(target["id"])
        )
        assert response.status_code == 404 and refusal(response)["code"] == "NOT_FOUND"
    assert await chain_length(gateway, foreign["id"], other.key) == 0
    unknown_path = await post_signed(gateway.http, "rail", integration["id"], key, {})
    assert unknown_path.status_code == 404

    replayed = shipment(product["id"], "kept")
    ok = await post_signed(gateway.http, "shipping", integration["id"], key, replayed)
    assert ok.status_code == 200
    await gateway.data(REVOKE, {"id": integration["id"]}, key=brand.key)
    for body in (shipment(product["id"]), replayed):
        revoked = await post_signed(gateway.http, "shipping", integration["id"], key, body)
        assert revoked.status_code == 401
        assert refusal(revoked)["reason"] == "REVOKED_INTEGRATION"
    assert await chain_length(gateway, product["id"], brand.key) == 1


async def test_malformed_bodies_are_refused_before_anything_is_written(gateway: Any) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    integration, key = await create_integration(gateway, brand)
    ingest = gateway.http
    for body, status in (
        (b"{not json", 400),
        (b"[]", 400),
        (shipment(product["id"], colour="red"), 400),
        (shipment(product["id"], type="TELEPORTED"), 400),
        (shipment(product["id"], latitude="north"), 400),
        (shipment(product["id"], occurredAt="yesterday"), 400),
        ({"productId": product["id"], "type": "SHIPPED"}, 400),
        (b'{"eventId": "' + b"x" * INGEST_BODY_MAX_BYTES + b'"}', 413),
    ):
        response = await post_signed(ingest, "shipping", integration["id"], key, body)
        assert response.status_code == status, (body, response.text)
        assert refusal(response)["code"] == "BAD_USER_INPUT"
    as_form = await post_signed(
        ingest,
        "shipping",
        integration["id"],
        key,
        shipment(product["id"]),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert as_form.status_code == 415
    assert await chain_length(gateway, product["id"], brand.key) == 0


async def test_signed_posts_and_ingest_event_share_the_keys_rate_limit() -> None:
    # One token a minute: however slow a loaded machine runs the calls, the
    # bucket does not refill between them.
    rate = Rate(per_minute=1, burst=3)
    async with serve(Limits(key_rate=rate)) as client:
        brand_id, brand_key = await client.brand()
        product = await client.product(brand_key, brand_id)

        class Brand:
            id, key = brand_id, brand_key

        integration, key = await create_integration(client, Brand)
        for _ in range(2):
            response = await post_signed(
                client.http, "shipping", integration["id"], key, shipment(product["id"])
            )
            assert response.status_code == 200, response.text
        answer = await client.post(INGEST, {"input": shipment(product["id"])}, key=key)
        assert answer.status_code == 200 and "errors" not in answer.json()
        limited = await post_signed(
            client.http, "shipping", integration["id"], key, shipment(product["id"])
        )
        assert limited.status_code == 429 and refusal(limited)["code"] == "RATE_LIMITED"
        assert int(limited.headers["retry-after"]) > 50
        over = await client.post(INGEST, {"input": shipment(product["id"])}, key=key)
        assert over.status_code == 429
        assert await chain_length(client, product["id"], brand_key) == 3


async def test_a_changed_hash_salt_is_a_masked_server_error_not_a_forgery(
    gateway: Any, monkeypatch: Any, caplog: Any
) -> None:
    """What a process started with another PROOFGATE_HASH_SALT sees: the key
    no longer derives to the stored hash, and the operator is told why."""
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    integration, key = await create_integration(gateway, brand)
    services = gateway.app.state.graphql.services
    monkeypatch.setattr(services, "hash_salt", bytes(reversed(services.hash_salt)))
    response = await post_signed(
        gateway.http, "shipping", integration["id"], key, shipment(product["id"])
    )
    assert response.status_code == 500
    [error] = response.json()["errors"]
    assert error["message"] == "Internal server error" and "requestId" in error["extensions"]
    assert "PROOFGATE_HASH_SALT" in caplog.text and key not in caplog.text
    assert await chain_length(gateway, product["id"], brand.key) == 0
