"""Every route authenticates in one place (``api/http/authentication.py``):
the failed-auth throttle, the refusal's log line, metrics and request id
(issue 27, rows 1, 10 and 12)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from _asgi import codes
from _ingest import CREATE, post_signed
from _limits import ADMIN_KEY, Client, serve

from api.settings.limits import Rate
from services.pipeline.settings import PipelineSettings
from tests._support.redis_server import RedisServer

TOOLS_LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}
THROTTLE = Rate(per_minute=6, burst=3)


async def _mcp(gateway: Client, key: str | None, **headers: str) -> Any:
    sent = {**MCP_HEADERS, **headers}
    if key:
        sent["Authorization"] = f"Bearer {key}"
    return await gateway.http.post("/mcp", json=TOOLS_LIST, headers=sent)


async def _metrics(gateway: Client) -> str:
    scrape = await gateway.http.get("/metrics", headers={"Authorization": f"Bearer {ADMIN_KEY}"})
    assert scrape.status_code == 200, scrape.text
    text: str = scrape.text
    return text


async def test_row1_mcp_wrong_keys_spend_the_failed_auth_throttle(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Wrong admin-key guesses on /mcp are refused 429 after the burst, the
    right key too, as on /graphql; each failure has its log line, its
    request id and its count in ``proofgate_errors_total``."""
    async with serve(auth_failure_rate=THROTTLE) as gateway:
        assert (await _mcp(gateway, ADMIN_KEY)).status_code == 200
        with caplog.at_level(logging.INFO, logger="proofgate.request"):
            for attempt in range(3):
                wrong = await _mcp(gateway, f"wrong-admin-key-{attempt}")
                assert (wrong.status_code, codes(wrong.json())) == (401, ["UNAUTHENTICATED"])
                assert wrong.json()["errors"][0]["extensions"]["requestId"]
        lines = [r for r in caplog.records if getattr(r, "fields", {}).get("path") == "/mcp"]
        assert [line.fields["errorCodes"] for line in lines] == [["UNAUTHENTICATED"]] * 3  # type: ignore[attr-defined]
        for key in ("wrong-admin-key-9", ADMIN_KEY):
            refused = await _mcp(gateway, key)
            assert (refused.status_code, codes(refused.json())) == (429, ["RATE_LIMITED"])
            assert refused.headers["Retry-After"]
        refused_graphql = await gateway.post("{ health { status } }", key=ADMIN_KEY)
        assert refused_graphql.status_code == 429
        async with gateway.at("198.51.100.9") as elsewhere:
            metrics = await _metrics(elsewhere)
    assert 'proofgate_errors_total{code="UNAUTHENTICATED"} 3.0' in metrics
    assert 'proofgate_route_requests_total{outcome="refused",route="/mcp"} 5.0' in metrics


async def test_row10_the_failed_auth_throttle_is_shared_through_redis(
    redis_server: RedisServer,
) -> None:
    """Two gateways on one Redis (two processes of one deployment): the
    failures one saw spend the bucket the other checks."""
    pipeline = PipelineSettings(redis_url=redis_server.url)
    async with (
        serve(auth_failure_rate=THROTTLE, pipeline=pipeline) as first,
        serve(auth_failure_rate=THROTTLE, pipeline=pipeline) as second,
    ):
        assert (await second.post("{ health { status } }", key=ADMIN_KEY)).status_code == 200
        for attempt in range(3):
            wrong = await first.post("{ health { status } }", key=f"wrong-{attempt}")
            assert wrong.status_code == 401
        refused = await second.post("{ health { status } }", key=ADMIN_KEY)
        assert (refused.status_code, codes(refused.json())) == (429, ["RATE_LIMITED"])
        assert (await _mcp(second, ADMIN_KEY)).status_code == 429
        async with second.at("198.51.100.10") as elsewhere:
            answer = await elsewhere.post("{ health { status } }", key=ADMIN_KEY)
            assert answer.status_code == 200


async def test_row12_mcp_limits_its_body_and_checks_the_origin() -> None:
    """The body limit of /graphql; a browser page from another origin (a
    rebound DNS name) is refused, a configured one and a server are not."""
    async with serve(cors_origins=("https://console.example.com",)) as gateway:
        big = {**TOOLS_LIST, "padding": "x" * (1024 * 1024)}
        too_large = await gateway.http.post(
            "/mcp", json=big, headers={**MCP_HEADERS, "Authorization": f"Bearer {ADMIN_KEY}"}
        )
        assert (too_large.status_code, codes(too_large.json())) == (413, ["BAD_USER_INPUT"])
        rebound = await _mcp(gateway, ADMIN_KEY, Origin="http://attacker.example:8000")
        assert (rebound.status_code, codes(rebound.json())) == (403, ["FORBIDDEN"])
        for origin in ("https://console.example.com", "http://localhost:8000"):
            assert (await _mcp(gateway, ADMIN_KEY, Origin=origin)).status_code == 200
        assert (await _mcp(gateway, ADMIN_KEY)).status_code == 200


async def test_row12_mcp_offers_a_key_only_the_tools_it_can_call() -> None:
    async with serve() as gateway:
        brand_id, brand_key = await gateway.brand()
        partner = await gateway.data(
            """mutation($brandId: ID!) {
                createApiKey(brandId: $brandId, name: "p", role: PARTNER) { apiKey }
            }""",
            {"brandId": brand_id},
            key=brand_key,
        )
        partner_key = partner["createApiKey"]["apiKey"]
        names = {}
        for who, key in (("brand", brand_key), ("partner", partner_key), ("anonymous", None)):
            answer = await _mcp(gateway, key)
            names[who] = {tool["name"] for tool in answer.json()["result"]["tools"]}
    assert "register_product" in names["brand"]
    assert "register_product" not in names["partner"]
    assert names["anonymous"] < names["partner"] < names["brand"]


async def test_row9_get_mcp_opens_no_stream() -> None:
    """A stateless server sends nothing unasked: GET is 405 at once, not a
    stream held open against the connection limit."""
    async with serve() as gateway:
        answer = await gateway.http.get("/mcp", headers={"Accept": "text/event-stream"})
    assert (answer.status_code, codes(answer.json())) == (405, ["BAD_USER_INPUT"])
    assert answer.headers["Allow"] == "POST"


async def test_row12_every_route_has_its_log_line_and_metrics(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with serve() as gateway:
        with caplog.at_level(logging.INFO, logger="proofgate.request"):
            await gateway.http.get("/dpp/NOPE.json")
            await gateway.http.get("/qr/NOPE.png")
            await gateway.http.post("/ingest/pos", json={})
            await _mcp(gateway, None)
        metrics = await _metrics(gateway)
    paths = [r.fields["path"] for r in caplog.records if hasattr(r, "fields")]  # type: ignore[attr-defined]
    assert paths == ["/dpp/NOPE.json", "/qr/NOPE.png", "/ingest/pos", "/mcp"]
    for route in ("/dpp", "/qr", "/ingest", "/mcp"):
        assert f'route="{route}"' in metrics


async def test_row1_wrong_ingest_signatures_spend_the_same_throttle() -> None:
    """A signature is a key too: guessing it from one address is refused
    (429) after the burst, the right signature included, as on /graphql."""
    async with serve(auth_failure_rate=THROTTLE) as gateway:
        brand_id, key = await gateway.brand()
        product = await gateway.product(key, brand_id)
        created = await gateway.data(
            CREATE, {"b": brand_id, "name": "Carrier", "type": "CARRIER"}, key=key
        )
        integration = created["createIntegration"]["integration"]["id"]
        ingest_key = created["createIntegration"]["ingestKey"]
        event = {"eventId": "e-1", "productId": product["id"], "type": "SHIPPED"}
        for attempt in range(3):
            wrong = await post_signed(
                gateway.http, "shipping", integration, f"pgi_wrong{attempt}", event
            )
            assert (wrong.status_code, codes(wrong.json())) == (401, ["UNAUTHENTICATED"])
        refused = await post_signed(gateway.http, "shipping", integration, ingest_key, event)
        assert (refused.status_code, codes(refused.json())) == (429, ["RATE_LIMITED"])
        assert refused.headers["Retry-After"]
        async with gateway.at("198.51.100.30") as elsewhere:
            accepted = await post_signed(elsewhere.http, "shipping", integration, ingest_key, event)
            assert accepted.status_code == 200, accepted.text
