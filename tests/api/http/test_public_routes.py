"""Routes that build a body from stored data (/dpp, /qr): one rate limit and
one response byte budget; and a product's chain that partner ingest cannot
fill, nor date into the future (issue 27, rows 2 and 7)."""

from __future__ import annotations

import uuid
from typing import Any

from _asgi import codes
from _ingest import CREATE, post_signed
from _limits import ADMIN_KEY, Client, grow_chain, serve

from api.settings.limits import Limits
from domain.chain import PARTNER_MAX_EVENTS
from domain.ingest import INTEGRATION_HEADER, SIGNATURE_HEADER

ADD_EVENT = """mutation($p: ID!, $input: ProvenanceEventInput!) {
    addProvenanceEvent(productId: $p, input: $input) { sequence occurredAt }
}"""
BIG_DATA = {"blob": "x" * 15_000}


async def _chain_reads(gateway: Client) -> float:
    """Chain pages read so far (AP09), from the metrics."""
    scrape = await gateway.http.get("/metrics", headers={"Authorization": f"Bearer {ADMIN_KEY}"})
    return sum(
        float(line.rpartition(" ")[2])
        for line in scrape.text.splitlines()
        if line.startswith("proofgate_storage_calls_total") and 'access_pattern="AP09"' in line
    )


async def test_row2_the_passport_keeps_to_the_response_budget_and_head_builds_nothing() -> None:
    """A product whose passport is over the budget: GET is refused with a
    code, HEAD answers its headers without reading the chain."""
    async with serve(Limits(max_response_bytes=256 * 1024)) as gateway:
        brand_id, key = await gateway.brand()
        product = await gateway.product(key, brand_id)
        await grow_chain(gateway.app, product["id"], 30, BIG_DATA)
        path = f"/dpp/{product['verificationCode']}.json"
        before = await _chain_reads(gateway)
        head = await gateway.http.head(path)
        assert head.status_code == 200
        assert head.headers["content-type"] == "application/ld+json"
        assert await _chain_reads(gateway) == before
        refused = await gateway.http.get(path)
        assert (refused.status_code, codes(refused.json())) == (422, ["QUERY_TOO_COMPLEX"])
        assert refused.json()["errors"][0]["extensions"]["maxResponseBytes"] == 256 * 1024
        assert await _chain_reads(gateway) > before


async def test_row2_passport_and_qr_take_from_the_callers_rate_limit() -> None:
    limits = Limits(rate_limit=60, rate_burst=3)
    async with serve(limits) as gateway:
        brand_id, key = await gateway.brand()
        code = (await gateway.product(key, brand_id))["verificationCode"]
        answers = [
            (await gateway.http.get(path)).status_code
            for path in (f"/dpp/{code}.json", f"/qr/{code}.png", f"/dpp/{code}.json")
        ]
        assert answers == [200, 200, 200]
        refused = await gateway.http.get(f"/dpp/{code}.json")
        assert (refused.status_code, codes(refused.json())) == (429, ["RATE_LIMITED"])
        assert int(refused.headers["Retry-After"]) >= 1
        assert (await gateway.http.get(f"/qr/{code}.svg")).status_code == 429
        async with gateway.at("198.51.100.20") as elsewhere:
            assert (await elsewhere.http.get(f"/dpp/{code}.json")).status_code == 200


async def _integration(gateway: Client, brand_id: str, key: str) -> tuple[str, str]:
    data = await gateway.data(
        CREATE, {"b": brand_id, "name": "Carrier", "type": "CARRIER"}, key=key
    )
    created = data["createIntegration"]
    return created["integration"]["id"], created["ingestKey"]


def _event(product_id: str, **fields: Any) -> dict[str, Any]:
    return {"eventId": uuid.uuid4().hex, "productId": product_id, "type": "SHIPPED", **fields}


async def test_row2_partner_ingest_cannot_fill_the_brands_chain() -> None:
    async with serve() as gateway:
        brand_id, key = await gateway.brand()
        product = await gateway.product(key, brand_id)
        integration, ingest_key = await _integration(gateway, brand_id, key)
        await grow_chain(gateway.app, product["id"], PARTNER_MAX_EVENTS - 1)
        accepted = await post_signed(
            gateway.http, "shipping", integration, ingest_key, _event(product["id"])
        )
        assert accepted.status_code == 200, accepted.text
        assert accepted.json()["event"]["sequence"] == PARTNER_MAX_EVENTS
        refused = await post_signed(
            gateway.http, "shipping", integration, ingest_key, _event(product["id"])
        )
        assert (refused.status_code, codes(refused.json())) == (400, ["BAD_USER_INPUT"])
        assert refused.json()["errors"][0]["extensions"]["maxEvents"] == PARTNER_MAX_EVENTS
        own = await gateway.data(
            ADD_EVENT, {"p": product["id"], "input": {"type": "INSPECTED"}}, key=key
        )
        assert own["addProvenanceEvent"]["sequence"] == PARTNER_MAX_EVENTS + 1


async def test_row7_a_given_occurred_at_is_not_far_in_the_future() -> None:
    """Over partner ingest and GraphQL alike; an hour's skew is allowed, and
    the chain's time is untouched by a refusal."""
    async with serve() as gateway:
        brand_id, key = await gateway.brand()
        product = await gateway.product(key, brand_id)
        integration, ingest_key = await _integration(gateway, brand_id, key)
        far = _event(product["id"], occurredAt="9999-12-31T23:59:59Z")
        refused = await post_signed(gateway.http, "shipping", integration, ingest_key, far)
        assert (refused.status_code, codes(refused.json())) == (400, ["BAD_USER_INPUT"])
        future = {"type": "INSPECTED", "occurredAt": "9999-12-31T23:59:59Z"}
        body = await gateway.execute(ADD_EVENT, {"p": product["id"], "input": future}, key=key)
        assert codes(body) == ["BAD_USER_INPUT"]
        own = await gateway.data(
            ADD_EVENT, {"p": product["id"], "input": {"type": "INSPECTED"}}, key=key
        )
        assert own["addProvenanceEvent"]["occurredAt"] < "9999"


async def test_row8_a_unicode_digit_in_the_signature_time_is_a_coded_refusal() -> None:
    """ "²" passes ``str.isdigit`` and fails ``int``: a 401 with its code, not a 500."""
    async with serve() as gateway:
        brand_id, key = await gateway.brand()
        product = await gateway.product(key, brand_id)
        integration, _ = await _integration(gateway, brand_id, key)
        for stamp in ("²", "¹²³", "1²"):
            answer = await gateway.http.post(
                "/ingest/shipping",
                json=_event(product["id"]),
                headers={
                    INTEGRATION_HEADER: integration,
                    SIGNATURE_HEADER: f"t={stamp},v1=00".encode("latin-1"),
                },
            )
            assert (answer.status_code, codes(answer.json())) == (401, ["UNAUTHENTICATED"])
