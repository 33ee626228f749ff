"""Requests that are wrong as sent answer 400 in GraphQL's shape with
BAD_USER_INPUT, and leave no traceback in the log."""

from __future__ import annotations

import logging

import pytest

DEEP = 1_000


def bodies() -> dict[str, bytes]:
    return {
        "null": b"null",
        "string": b'"x"',
        "number": b"123",
        "list": b"[1, 2]",
        "huge-integer": b"1" * 4_300,
        "huge-integer-in-variables": b'{"query": "{ health { status } }", "variables": {"n": '
        + b"9" * 5_000
        + b"}}",
        "deep": b"[" * DEEP + b"]" * DEEP,
        "deep-in-variables": b'{"query": "{ health { status } }", "variables": {"v": '
        + b"[" * DEEP
        + b"]" * DEEP
        + b"}}",
        "invalid-utf-8": b'{"query": "{ health { status } }\xff\xfe"}',
        "lone-surrogate": b'{"query": "{ health { status } }", "operationName": "\\ud800"}',
        "lone-surrogate-query": b'{"query": "{ health { status \\udc00 } }"}',
        "query-not-a-string": b'{"query": 1}',
        "variables-not-an-object": b'{"query": "{ health { status } }", "variables": [1]}',
    }


@pytest.mark.parametrize("name", list(bodies()))
async def test_malformed_bodies_are_400_bad_user_input(
    sqlite_gateway, caplog: pytest.LogCaptureFixture, name: str
) -> None:
    with caplog.at_level(logging.WARNING):
        response = await sqlite_gateway.http.post(
            "/graphql", content=bodies()[name], headers={"Content-Type": "application/json"}
        )

    assert response.status_code == 400, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["data"] is None
    assert sqlite_gateway.codes(body) == ["BAD_USER_INPUT"]
    assert "Traceback" not in response.text
    assert [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info] == []


@pytest.mark.parametrize("when", ["9999-12-31T23:59:59.999999-14:00", "0001-01-01T00:00:00+14:00"])
async def test_a_datetime_out_of_range_in_utc_is_bad_user_input(
    sqlite_gateway, caplog: pytest.LogCaptureFixture, when: str
) -> None:
    brand = await sqlite_gateway.register_brand()
    product = await sqlite_gateway.register_product(brand)
    with caplog.at_level(logging.ERROR):
        body = await sqlite_gateway.execute(
            """mutation($p: ID!, $e: ProvenanceEventInput!) {
                addProvenanceEvent(productId: $p, input: $e) { sequence }
            }""",
            {"p": product["id"], "e": {"type": "SHIPPED", "occurredAt": when}},
            key=brand.key,
        )
    assert sqlite_gateway.codes(body) == ["BAD_USER_INPUT"]
    assert caplog.records == []


async def test_a_subscription_over_http_is_bad_user_input(
    sqlite_gateway, caplog: pytest.LogCaptureFixture
) -> None:
    brand = await sqlite_gateway.register_brand()
    with caplog.at_level(logging.ERROR):
        response = await sqlite_gateway.post(
            "subscription($b: ID!) { threatAlerts(brandId: $b) { id } }",
            {"b": brand.id},
            key=brand.key,
        )
    assert response.status_code == 400, response.text
    body = response.json()
    assert sqlite_gateway.codes(body) == ["BAD_USER_INPUT"]
    assert "WebSocket" in body["errors"][0]["extensions"]["hint"]
    assert caplog.records == []


@pytest.mark.parametrize("method", ["POST", "GET"])
async def test_a_subscription_over_http_is_bad_user_input_with_a_hint(
    sqlite_gateway, caplog: pytest.LogCaptureFixture, method: str
) -> None:
    query = 'subscription { threatAlerts(brandId: "B1") { id } }'
    with caplog.at_level(logging.WARNING):
        if method == "POST":
            response = await sqlite_gateway.http.post("/graphql", json={"query": query})
        else:
            response = await sqlite_gateway.http.get(
                "/graphql", params={"query": query}, headers={"Accept": "application/json"}
            )
    assert response.status_code == 400, response.text
    body = response.json()
    assert sqlite_gateway.codes(body) == ["BAD_USER_INPUT"]
    assert "WebSocket" in body["errors"][0]["extensions"]["hint"]
    assert [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info] == []
