"""Partner ingest through GraphQL, on each backend: integrations and their
keys, ingestEvent's idempotency, revocation and tenant isolation."""

from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pytest
from _chain import offline_hash
from _ingest import CHAIN, INGEST, INTEGRATIONS, REVOKE, create_integration

from domain.enums import ProvenanceEventType
from domain.errors import Unauthenticated
from domain.identifiers import hash_api_key


def shipment(product_id: str, event_id: str | None = None, **fields: Any) -> dict[str, Any]:
    return {
        "input": {
            "eventId": event_id or f"evt-{uuid.uuid4().hex}",
            "productId": product_id,
            "type": "SHIPPED",
            "actor": "Fast Freight",
            "location": "Rotterdam, NL",
            "latitude": 51.9225,
            "longitude": 4.47917,
            "data": {"parcel": 7},
            **fields,
        }
    }


async def events_of(gateway: Any, product_id: str, key: str) -> list[dict[str, Any]]:
    data = await gateway.data(CHAIN, {"p": product_id}, key=key)
    return [edge["node"] for edge in data["product"]["provenance"]["edges"]]


async def integrations_of(gateway: Any, brand: Any) -> list[dict[str, Any]]:
    data = await gateway.data(INTEGRATIONS, {"b": brand.id}, key=brand.key)
    return [edge["node"] for edge in data["brand"]["integrations"]["edges"]]


async def test_a_brand_key_creates_lists_and_revokes_integrations(gateway: Any) -> None:
    brand, stranger = await gateway.register_brand(), await gateway.register_brand()
    partner = await gateway.create_key(brand, "PARTNER")
    integration, key = await create_integration(gateway, brand, "POINT_OF_SALE", "Shop till")
    assert key.startswith("pgi_") and len(key) == 47
    assert integration["type"] == "POINT_OF_SALE" and integration["source"] == "POS"
    assert integration["ingestUrl"].endswith("/ingest/pos")
    assert integration["eventCount"] == 0 and integration["revokedAt"] is None
    listed = await integrations_of(gateway, brand)
    assert [i["id"] for i in listed] == [integration["id"]]
    body = await gateway.execute(INTEGRATIONS, {"b": brand.id}, key=brand.key)
    assert key not in json.dumps(body) and hash_api_key(key) not in json.dumps(body)

    for caller, code in ((partner, "FORBIDDEN"), (stranger.key, "NOT_FOUND"), (None, None)):
        refused = await gateway.execute(
            'mutation($b: ID!) { createIntegration(brandId: $b, name: "x", type: CUSTOM) '
            "{ ingestKey } }",
            {"b": brand.id},
            key=caller,
        )
        assert gateway.codes(refused) == [code or "UNAUTHENTICATED"]
        revoke = await gateway.execute(REVOKE, {"id": integration["id"]}, key=caller)
        assert gateway.codes(revoke) == [code or "UNAUTHENTICATED"]
    partner_view = await gateway.execute(INTEGRATIONS, {"b": brand.id}, key=partner)
    assert partner_view["data"]["brand"]["integrations"] is None
    assert gateway.codes(partner_view) == ["FORBIDDEN"]
    assert await integrations_of(gateway, brand) == listed

    revoked = (await gateway.data(REVOKE, {"id": integration["id"]}, key=brand.key))[
        "revokeIntegration"
    ]
    assert revoked["revokedAt"] is not None
    again = (await gateway.data(REVOKE, {"id": integration["id"]}, key=brand.key))[
        "revokeIntegration"
    ]
    assert again == revoked
    assert (await integrations_of(gateway, brand))[0]["revokedAt"] == revoked["revokedAt"]
    malformed = await gateway.execute(REVOKE, {"id": "int_nonsense"}, key=brand.key)
    assert gateway.codes(malformed) == ["BAD_USER_INPUT"]


async def test_an_ingested_event_joins_the_chain_with_its_source(gateway: Any) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    integration, key = await create_integration(gateway, brand)
    body = shipment(product["id"])
    receipt = (await gateway.data(INGEST, body, key=key))["ingestEvent"]
    assert receipt["integrationId"] == integration["id"]
    assert receipt["eventId"] == body["input"]["eventId"]
    assert receipt["productId"] == product["id"]
    event = receipt["event"]
    assert event["sequence"] == 1 and event["source"] == "SHIPPING"
    assert event["previousHash"] == product["certificate"]["hash"]
    assert offline_hash(event) == event["hash"]
    assert await events_of(gateway, product["id"], brand.key) == [event]

    by_code = {**body["input"], "eventId": "by-code", "productId": None}
    by_code["code"] = product["verificationCode"].lower().replace("-", " ")
    second = (await gateway.data(INGEST, {"input": by_code}, key=key))["ingestEvent"]["event"]
    assert second["sequence"] == 2 and second["previousHash"] == event["hash"]
    assert offline_hash(second) == second["hash"]
    [counted] = await integrations_of(gateway, brand)
    assert counted["eventCount"] == 2 and counted["lastEventAt"] == second["occurredAt"]


async def test_the_same_event_id_appends_once_and_answers_the_same(gateway: Any) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    _, key = await create_integration(gateway, brand)
    body = shipment(product["id"], "carrier-0001")
    first = await gateway.data(INGEST, body, key=key)
    assert await gateway.data(INGEST, body, key=key) == first
    concurrent = await asyncio.gather(
        *(gateway.data(INGEST, shipment(product["id"], "carrier-0002"), key=key) for _ in range(5))
    )
    assert all(answer == concurrent[0] for answer in concurrent)
    changed = shipment(product["id"], "carrier-0001", location="Antwerp, BE")
    conflict = await gateway.execute(INGEST, changed, key=key)
    assert gateway.codes(conflict) == ["CONFLICT"]
    events = await events_of(gateway, product["id"], brand.key)
    assert [e["sequence"] for e in events] == [1, 2]
    assert events[0] == first["ingestEvent"]["event"]
    [integration] = await integrations_of(gateway, brand)
    assert integration["eventCount"] == 2


async def test_a_revoked_integration_appends_nothing_at_once(gateway: Any) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    integration, key = await create_integration(gateway, brand)
    replayed = shipment(product["id"], "before-revoke")
    await gateway.data(INGEST, replayed, key=key)
    await gateway.data(REVOKE, {"id": integration["id"]}, key=brand.key)
    for body in (shipment(product["id"]), replayed):
        response = await gateway.post(INGEST, body, key=key)
        assert response.status_code == 401
        [error] = response.json()["errors"]
        assert error["extensions"]["code"] == "UNAUTHENTICATED"
        assert error["extensions"]["reason"] == "REVOKED_INTEGRATION"
    assert len(await events_of(gateway, product["id"], brand.key)) == 1
    assert (await integrations_of(gateway, brand))[0]["eventCount"] == 1


async def test_an_integration_reaches_only_its_own_brands_products(gateway: Any) -> None:
    brand, other = await gateway.register_brand(), await gateway.register_brand()
    foreign = await gateway.register_product(other)
    _, key = await create_integration(gateway, brand)
    by_id = await gateway.execute(INGEST, shipment(foreign["id"]), key=key)
    missing = await gateway.execute(INGEST, shipment("01JD8X3V9Q7ZK5M2N4P6R8T0W1"), key=key)
    assert gateway.codes(by_id) == gateway.codes(missing) == ["NOT_FOUND"]
    assert by_id["errors"][0]["message"] == missing["errors"][0]["message"]
    by_code = shipment(foreign["id"])
    by_code["input"] |= {"productId": None, "code": foreign["verificationCode"]}
    assert gateway.codes(await gateway.execute(INGEST, by_code, key=key)) == ["NOT_FOUND"]
    assert await events_of(gateway, foreign["id"], other.key) == []

    reads = await gateway.execute(
        "query($b: ID!, $p: ID!) { brand(id: $b) { name stats { scanCount } } "
        "product(id: $p) { name } }",
        {"b": brand.id, "p": foreign["id"]},
        key=key,
    )
    data = reads["data"] or {}
    assert data.get("product") is None and (data.get("brand") or {}).get("stats") is None
    assert gateway.codes(reads) and set(gateway.codes(reads)) <= {"NOT_FOUND", "FORBIDDEN"}


async def test_only_an_ingest_key_ingests_and_bad_input_changes_nothing(gateway: Any) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    _, key = await create_integration(gateway, brand)
    body = shipment(product["id"])
    assert gateway.codes(await gateway.execute(INGEST, body, key=brand.key)) == ["FORBIDDEN"]
    assert gateway.codes(await gateway.execute(INGEST, body, key=gateway.admin_key)) == [
        "FORBIDDEN"
    ]
    assert gateway.codes(await gateway.execute(INGEST, body)) == ["UNAUTHENTICATED"]
    for bad in (
        {"type": "RECALLED"},
        {"type": "TRANSFERRED"},
        {"code": product["verificationCode"]},
        {"productId": None},
        {"eventId": ""},
        {"eventId": "has space"},
        {"eventId": "x" * 129},
        {"latitude": 91.0},
    ):
        refused = await gateway.execute(INGEST, shipment(product["id"], **bad), key=key)
        assert gateway.codes(refused) == ["BAD_USER_INPUT"], bad
    assert await events_of(gateway, product["id"], brand.key) == []
    assert (await integrations_of(gateway, brand))[0]["eventCount"] == 0


async def test_a_revocation_after_the_key_was_checked_still_stops_the_append(
    gateway: Any, monkeypatch: Any
) -> None:
    """The append's own transaction is conditional on the integration not
    being revoked: a call already past every read appends nothing."""
    from resolvers.context import RequestContext
    from resolvers.loaders import Loaders
    from services.auth import authenticate
    from services.ingest import receive

    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    integration, key = await create_integration(gateway, brand)
    services = gateway.app.state.graphql.services
    principal = await authenticate(services.storage, f"Bearer {key}", services.admin_key_hash)
    reached = []
    source_of = receive._source

    async def revoked_meanwhile(context: Any, ref: Any) -> Any:
        source = await source_of(context, ref)
        await gateway.data(REVOKE, {"id": integration["id"]}, key=brand.key)
        reached.append(source)
        return source

    monkeypatch.setattr(receive, "_source", revoked_meanwhile)
    context = RequestContext(
        services=services,
        principal=principal,
        loaders=Loaders(services.storage, principal.tenant),
        request_id="test",
    )
    fields = IngestInput(f"late-{uuid.uuid4().hex}", product["id"])
    with pytest.raises(Unauthenticated) as refused:
        await receive.ingest_event(context, fields)
    assert reached and refused.value.extensions["reason"] == "REVOKED_INTEGRATION"
    assert await events_of(gateway, product["id"], brand.key) == []
    assert (await integrations_of(gateway, brand))[0]["eventCount"] == 0

    # The positive control: the same call on a live integration appends.
    monkeypatch.setattr(receive, "_source", source_of)
    live, live_key = await create_integration(gateway, brand)
    live_principal = await authenticate(
        services.storage, f"Bearer {live_key}", services.admin_key_hash
    )
    context.principal = live_principal
    receipt = await receive.ingest_event(context, IngestInput("on-time", product["id"]))
    assert receipt.integration_id == live["id"] and receipt.event.sequence == 1


@dataclass(frozen=True)
class IngestInput:
    event_id: str
    product_id: str | None
    code: str | None = None
    type: ProvenanceEventType = ProvenanceEventType.SHIPPED
    actor: str | None = None
    location: str | None = None
    latitude: float | None = None
    longitude: float | None = None
    occurred_at: datetime | None = None
    data: object | None = None
