"""addProvenanceEvent and Product.provenance over HTTP, on both backends."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

from _chain import offline_hash

from domain.validation import EVENT_DATA_MAX_BYTES

ADD_EVENT = """mutation($p: ID!, $input: ProvenanceEventInput!) {
    addProvenanceEvent(productId: $p, input: $input) {
        sequence type actor location latitude longitude occurredAt data hash previousHash
    }
}"""
PROVENANCE = """query($p: ID!, $first: Int, $after: String) {
    product(id: $p) {
        certificate { hash chainHead }
        provenance(first: $first, after: $after) {
            edges {
                cursor
                node {
                    sequence type actor location latitude longitude
                    occurredAt data hash previousHash
                }
            }
            pageInfo { hasNextPage endCursor }
        }
    }
}"""


async def add_event(gateway, product_id: str, key: str, **fields: Any) -> dict[str, Any]:
    body = await gateway.execute(
        ADD_EVENT, {"p": product_id, "input": {"type": "SHIPPED", **fields}}, key=key
    )
    return body


async def chain(gateway, product_id: str, key: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The certificate and every event, read page by page."""
    events: list[dict[str, Any]] = []
    after = None
    while True:
        data = await gateway.data(
            PROVENANCE, {"p": product_id, "first": 3, "after": after}, key=key
        )
        connection = data["product"]["provenance"]
        events.extend(edge["node"] for edge in connection["edges"])
        if not connection["pageInfo"]["hasNextPage"]:
            return data["product"]["certificate"], events
        after = connection["pageInfo"]["endCursor"]


def assert_linear(certificate: dict[str, Any], events: list[dict[str, Any]]) -> None:
    previous = certificate["hash"]
    for number, event in enumerate(events, start=1):
        assert event["sequence"] == number
        assert event["previousHash"] == previous
        assert event["hash"] == offline_hash(event)
        previous = event["hash"]
    assert certificate["chainHead"] == previous


async def test_events_link_into_a_chain_a_third_party_can_verify(gateway) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    first = await add_event(
        gateway,
        product["id"],
        brand.key,
        type="MANUFACTURED",
        actor="Factory 7",
        location="Porto, PT",
        latitude=41.1579,
        longitude=-8.6291,
        data={"batch": "B-12", "units": 40},
    )
    assert "errors" not in first, first
    event = first["data"]["addProvenanceEvent"]
    assert event["sequence"] == 1
    assert event["previousHash"] == product["certificate"]["hash"]
    assert (event["latitude"], event["longitude"]) == (41.1579, -8.6291)
    assert event["data"] == {"batch": "B-12", "units": 40}
    for _ in range(4):
        assert "errors" not in await add_event(gateway, product["id"], brand.key)
    certificate, events = await chain(gateway, product["id"], brand.key)
    assert [e["type"] for e in events] == ["MANUFACTURED", *["SHIPPED"] * 4]
    assert_linear(certificate, events)
    audit = await gateway.data("{ auditLog(days: 1) { action targetIds } }", key=gateway.admin_key)
    actions = [e["action"] for e in audit["auditLog"] if product["id"] in e["targetIds"]]
    assert actions.count("addProvenanceEvent") == 5


async def test_provenance_pages_in_order_with_exact_has_next_page(gateway) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    for _ in range(4):
        await add_event(gateway, product["id"], brand.key)
    data = await gateway.data(PROVENANCE, {"p": product["id"], "first": 4}, key=brand.key)
    page = data["product"]["provenance"]
    assert [e["node"]["sequence"] for e in page["edges"]] == [1, 2, 3, 4]
    assert page["pageInfo"]["hasNextPage"] is False
    data = await gateway.data(
        PROVENANCE,
        {"p": product["id"], "first": 2, "after": page["edges"][1]["cursor"]},
        key=brand.key,
    )
    assert [e["node"]["sequence"] for e in data["product"]["provenance"]["edges"]] == [3, 4]


async def test_provenance_is_public_through_the_code(gateway) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    await add_event(gateway, product["id"], brand.key, location="Lyon")
    data = await gateway.data(
        """query($c: String!) {
            productByCode(code: $c) { provenance { edges { node { sequence location } } } }
        }""",
        {"c": product["verificationCode"]},
    )
    assert data["productByCode"]["provenance"]["edges"] == [
        {"node": {"sequence": 1, "location": "Lyon"}}
    ]


async def test_an_event_earlier_than_the_head_is_bad_user_input(gateway) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    # Ahead of the clock, within the hour an event's time may be (a skewed clock).
    head = (datetime.now(UTC) + timedelta(minutes=30)).replace(microsecond=0)
    stamp = head.strftime("%Y-%m-%dT%H:%M:%SZ")
    ok = await add_event(gateway, product["id"], brand.key, occurredAt=stamp)
    stored = head.strftime("%Y-%m-%dT%H:%M:%S.000000Z")
    assert ok["data"]["addProvenanceEvent"]["occurredAt"] == stored
    same_time = await add_event(gateway, product["id"], brand.key, occurredAt=stamp)
    assert same_time["data"]["addProvenanceEvent"]["sequence"] == 2
    before = (head - timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    earlier = await add_event(gateway, product["id"], brand.key, occurredAt=before)
    assert gateway.codes(earlier) == ["BAD_USER_INPUT"]
    assert "earlier than the latest event" in earlier["errors"][0]["message"]
    # A default time never precedes a head set in the future by a skewed clock.
    later = await add_event(gateway, product["id"], brand.key)
    assert later["data"]["addProvenanceEvent"]["occurredAt"] == stored
    _, events = await chain(gateway, product["id"], brand.key)
    assert [e["sequence"] for e in events] == [1, 2, 3]


INVALID_EVENTS: list[tuple[dict[str, Any], str]] = [
    ({"type": "RECALLED"}, "recallProduct"),
    ({"type": "TRANSFERRED"}, "transferProduct"),
    ({"latitude": 10.0}, "longitude"),
    ({"latitude": 91.0, "longitude": 0.0}, "latitude"),
    ({"latitude": 1.0, "longitude": 180.5}, "longitude"),
    ({"latitude": 1.123456789, "longitude": 0.0}, "decimal places"),
    ({"location": "x" * 201}, "location"),
    ({"actor": ""}, "actor"),
    ({"location": "line\nbreak"}, "control character"),
    ({"data": ["not", "an", "object"]}, "data"),
    ({"data": {"blob": "x" * EVENT_DATA_MAX_BYTES}}, "bytes"),
    ({"data": {"price": 1.5}}, "integer"),
    ({"occurredAt": "yesterday"}, "ISO 8601"),
]


async def test_event_input_is_validated_and_writes_nothing(gateway) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    for fields, fragment in INVALID_EVENTS:
        body = await add_event(gateway, product["id"], brand.key, **fields)
        assert gateway.codes(body) == ["BAD_USER_INPUT"], (fields, body)
        error = body["errors"][0]
        assert fragment in error["message"] + error["extensions"].get("hint", ""), (fields, error)
    _, events = await chain(gateway, product["id"], brand.key)
    assert events == []


async def test_concurrent_appends_leave_one_linear_chain(gateway) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    bodies = await asyncio.gather(
        *(add_event(gateway, product["id"], brand.key, actor=f"writer {n}") for n in range(10))
    )
    appended = [b["data"]["addProvenanceEvent"] for b in bodies if not b.get("errors")]
    conflicts = [b for b in bodies if b.get("errors")]
    assert all(gateway.codes(b) == ["CONFLICT"] for b in conflicts)
    assert sorted(e["sequence"] for e in appended) == list(range(1, len(appended) + 1))
    assert len(appended) >= 1
    certificate, events = await chain(gateway, product["id"], brand.key)
    assert len(events) == len(appended)
    assert {e["actor"] for e in events} == {e["actor"] for e in appended}
    assert_linear(certificate, events)


async def test_append_access_control(gateway) -> None:
    owner = await gateway.register_brand()
    product = await gateway.register_product(owner)
    other = await gateway.register_brand()
    partner = await gateway.create_key(owner, "PARTNER")
    foreign_partner = await gateway.create_key(other, "PARTNER")
    cases = [
        (None, "UNAUTHENTICATED"),
        (other.key, "NOT_FOUND"),
        (foreign_partner, "NOT_FOUND"),
        (partner, "FORBIDDEN"),
    ]
    for key, code in cases:
        body = await add_event(gateway, product["id"], key)
        assert gateway.codes(body) == [code]
        assert product["id"] not in str(body["errors"]) and product["name"] not in str(
            body["errors"]
        )
    missing = await add_event(gateway, "01ARZ3NDEKTSV4RRFFQ69G5FAV", other.key)
    assert missing["errors"][0]["message"] == body_message(
        await add_event(gateway, product["id"], other.key)
    )
    assert gateway.codes(await add_event(gateway, "not-an-id", owner.key)) == ["BAD_USER_INPUT"]
    by_admin = await add_event(gateway, product["id"], gateway.admin_key)
    assert by_admin["data"]["addProvenanceEvent"]["sequence"] == 1
    # Partners read the chain of their own brand.
    _, events = await chain(gateway, product["id"], partner)
    assert [e["sequence"] for e in events] == [1]


def body_message(body: dict[str, Any]) -> str:
    message: str = body["errors"][0]["message"]
    return message


async def test_a_cursor_is_bound_to_its_product_and_tenant(gateway) -> None:
    brand = await gateway.register_brand()
    product, sibling = await gateway.register_product(brand), await gateway.register_product(brand)
    for _ in range(2):
        await add_event(gateway, product["id"], brand.key)
    await add_event(gateway, sibling["id"], brand.key)
    page = (await gateway.data(PROVENANCE, {"p": product["id"], "first": 1}, key=brand.key))[
        "product"
    ]["provenance"]
    cursor = page["pageInfo"]["endCursor"]
    elsewhere = await gateway.execute(
        PROVENANCE, {"p": sibling["id"], "first": 1, "after": cursor}, key=brand.key
    )
    assert gateway.codes(elsewhere) == ["BAD_USER_INPUT"]
    public = await gateway.execute(
        """query($c: String!, $a: String) {
            productByCode(code: $c) { provenance(after: $a) { edges { node { sequence } } } }
        }""",
        {"c": product["verificationCode"], "a": cursor},
    )
    assert gateway.codes(public) == ["BAD_USER_INPUT"]
