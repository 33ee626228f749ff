"""Who a product was transferred to is the brand's business: the public chain
carries a keyed digest, the brand's keys read the name, and transfers stored
with the name in clear are redacted on read (docs/design.md, Transferees)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from domain.chain import ChainHead, ProvenanceEvent, event_hash, next_event
from domain.datetimes import parse_datetime
from domain.enums import ProvenanceEventType
from services.provenance.items import chain_head, event_item, head_update
from storage import Put, Update
from storage.access_patterns import PRODUCT_BY_ID

ALICE = "Alice Example <alice@example.com>"
EVENT_FIELDS = "sequence type actor location latitude longitude occurredAt data hash previousHash"
BY_CODE = (
    "query($c: String!) { productByCode(code: $c) {"
    f" provenance(first: 10) {{ edges {{ node {{ {EVENT_FIELDS} }} }} }} }} }}"
)
BY_ID = (
    "query($p: ID!) { product(id: $p) {"
    f" provenance(first: 10) {{ edges {{ node {{ {EVENT_FIELDS} recipient }} }} }} }} }}"
)
EXPLORE = (
    "{ explore(first: 100) { edges { node {"
    " provenance(first: 10) { edges { node { data } } } } } } }"
)


def events(data: dict[str, Any], field: str) -> list[dict[str, Any]]:
    return [edge["node"] for edge in data[field]["provenance"]["edges"]]


def recomputes(node: dict[str, Any]) -> bool:
    """Whether the event's hash follows from its public fields alone."""
    event = ProvenanceEvent(
        sequence=node["sequence"],
        type=ProvenanceEventType(node["type"]),
        occurred_at=parse_datetime(node["occurredAt"]),
        previous_hash=node["previousHash"],
        hash=node["hash"],
        actor=node["actor"],
        location=node["location"],
        latitude=None if node["latitude"] is None else Decimal(str(node["latitude"])),
        longitude=None if node["longitude"] is None else Decimal(str(node["longitude"])),
        data=node["data"],
    )
    return event_hash(event) == node["hash"]


async def test_a_transferee_is_not_public(gateway) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    code = {"c": product["verificationCode"]}
    await gateway.data(
        'mutation($p: ID!, $to: String!) { transferProduct(productId: $p, to: $to, reason: "sold")'
        " { status } }",
        {"p": product["id"], "to": ALICE},
        key=brand.key,
    )
    anonymous = await gateway.http.post("/graphql", json={"query": BY_CODE, "variables": code})
    gallery = await gateway.http.post("/graphql", json={"query": EXPLORE})
    passport = await gateway.http.get(f"/dpp/{product['verificationCode']}.json")
    for response in (anonymous, gallery, passport):
        assert response.status_code == 200
        assert "alice" not in response.text.lower()
    [public] = events(anonymous.json()["data"], "productByCode")
    assert public["data"]["to"].startswith("hmac-sha256:")
    assert public["data"]["reason"] == "sold"
    assert recomputes(public)
    own = await gateway.data(BY_ID, {"p": product["id"]}, key=brand.key)
    [mine] = events(own, "product")
    assert mine["recipient"] == ALICE
    assert mine["data"] == public["data"]
    asked = await gateway.execute(BY_CODE.replace("previousHash", "previousHash recipient"), code)
    assert [e["extensions"]["code"] for e in asked["errors"]] == ["UNAUTHENTICATED"]
    assert "alice" not in str(asked).lower()


async def test_a_transfer_stored_in_clear_is_redacted_on_read(gateway) -> None:
    """Transfers written before recipients were digested hold the name in
    ``data.to``: the brand still reads it there, anyone else gets the digest,
    and the chain still verifies against what is stored."""
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    storage = gateway.app.state.graphql.services.storage
    item = await storage.get(PRODUCT_BY_ID, product_id=product["id"])
    event = next_event(
        chain_head(item),
        type=ProvenanceEventType.TRANSFERRED,
        occurred_at=datetime.fromisoformat("2030-01-01T00:00:00+00:00"),
        data={"to": ALICE},
    )
    await storage.transact_write(
        [
            Put(
                event_item(
                    event,
                    product_id=product["id"],
                    brand_id=brand.id,
                    recorded_at=event.occurred_at,
                )
            ),
            Update(PRODUCT_BY_ID.key(product_id=product["id"]), set=head_update(event)),
        ]
    )
    code = {"c": product["verificationCode"]}
    anonymous = await gateway.http.post("/graphql", json={"query": BY_CODE, "variables": code})
    assert "alice" not in anonymous.text.lower()
    [public] = events(anonymous.json()["data"], "productByCode")
    assert public["data"]["to"].startswith("hmac-sha256:")
    own = await gateway.data(BY_ID, {"p": product["id"]}, key=brand.key)
    [mine] = events(own, "product")
    assert (mine["data"], mine["recipient"]) == ({"to": ALICE}, ALICE)
    assert recomputes(mine)
    verdict = await gateway.data(
        "query($c: String!) { verification(code: $c) { chainIntact } }", code
    )
    assert verdict["verification"]["chainIntact"] is True
    assert ChainHead.of(event).hash == mine["hash"]
