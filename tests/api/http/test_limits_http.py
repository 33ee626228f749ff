"""What a request must look like: body size, CSRF, GET, CORS."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from _asgi import answer, codes
from _limits import Client, serve

from api.settings.limits import MAX_BODY_BYTES, Limits

QUERY = "{ __typename }"


def body_of(size: int) -> bytes:
    """A JSON request of exactly ``size`` bytes, padded with an unused variable."""
    empty = json.dumps({"query": QUERY, "variables": {"pad": ""}}).encode()
    padded = json.dumps({"query": QUERY, "variables": {"pad": "x" * (size - len(empty))}}).encode()
    assert len(padded) == size
    return padded


@pytest.fixture(scope="module")
async def client() -> AsyncIterator[Client]:
    async with serve() as client:
        yield client


async def test_body_just_under_and_just_over(client: Client) -> None:
    headers = {"Content-Type": "application/json"}
    under = await client.http.post("/graphql", content=body_of(MAX_BODY_BYTES), headers=headers)
    assert under.status_code == 200
    assert answer(under.json()) == {"data": {"__typename": "Query"}}
    over = await client.http.post("/graphql", content=body_of(MAX_BODY_BYTES + 1), headers=headers)
    assert over.status_code == 413
    assert over.json()["data"] is None
    assert codes(over.json()) == ["BAD_USER_INPUT"]
    assert over.json()["errors"][0]["extensions"]["maxBytes"] == MAX_BODY_BYTES


async def test_a_body_without_a_length_is_counted_as_it_arrives() -> None:
    async def chunks(total: int) -> AsyncIterator[bytes]:
        body = body_of(total)
        for start in range(0, total, 64):
            yield body[start : start + 64]

    async with serve(Limits(max_body_bytes=1000)) as client:
        headers = {"Content-Type": "application/json"}
        under = await client.http.post("/graphql", content=chunks(1000), headers=headers)
        assert under.status_code == 200
        assert "content-length" not in under.request.headers
        over = await client.http.post("/graphql", content=chunks(1001), headers=headers)
        assert over.status_code == 413


@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "text/plain;charset=UTF-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data",
        None,
    ],
)
async def test_posts_a_browser_sends_without_preflight_are_refused(
    client: Client, content_type: str | None
) -> None:
    headers = {"Content-Type": content_type} if content_type else {}
    response = await client.http.post(
        "/graphql", content=json.dumps({"query": QUERY}), headers=headers
    )
    assert response.status_code == 415
    assert response.json()["data"] is None
    assert codes(response.json()) == ["BAD_USER_INPUT"]
    assert "X-Proofgate-CSRF" in response.json()["errors"][0]["extensions"]["hint"]


@pytest.mark.parametrize(
    "headers",
    [
        {"Content-Type": "application/json"},
        {"Content-Type": "application/json; charset=utf-8"},
        {"Content-Type": "application/graphql-response+json"},
        {"Content-Type": "text/plain", "X-Proofgate-CSRF": "1"},
        {"Content-Type": "text/plain", "Apollo-Require-Preflight": "true"},
    ],
    ids=["json", "charset", "graphql-response", "csrf-header", "apollo-header"],
)
async def test_json_or_a_preflight_header_is_accepted(
    client: Client, headers: dict[str, str]
) -> None:
    response = await client.http.post(
        "/graphql", content=json.dumps({"query": QUERY}), headers=headers
    )
    assert response.status_code == 200
    assert answer(response.json()) == {"data": {"__typename": "Query"}}


async def test_get_runs_queries_only(client: Client) -> None:
    query = await client.http.get(
        "/graphql", params={"query": QUERY}, headers={"Accept": "application/json"}
    )
    assert answer(query.json()) == {"data": {"__typename": "Query"}}
    mutation = await client.http.get(
        "/graphql", params={"query": 'mutation { verifyProduct(code: "x") { result } }'}
    )
    assert mutation.status_code == 400
    assert "mutations are not allowed" in mutation.text


ORIGIN = "http://localhost:5173"


async def test_no_cors_by_default(client: Client) -> None:
    response = await client.http.post("/graphql", json={"query": QUERY}, headers={"Origin": ORIGIN})
    assert "access-control-allow-origin" not in response.headers


async def test_cors_for_configured_origins() -> None:
    async with serve(Limits(max_body_bytes=100), cors_origins=(ORIGIN,)) as client:
        preflight = await client.http.options(
            "/graphql",
            headers={
                "Origin": ORIGIN,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type, x-proofgate-csrf",
            },
        )
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == ORIGIN
        foreign = await client.http.options(
            "/graphql",
            headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"},
        )
        assert "access-control-allow-origin" not in foreign.headers
        # Refusals carry the CORS headers, so the browser app can read them.
        refused = await client.http.post(
            "/graphql",
            json={"query": QUERY, "variables": {"pad": "x" * 100}},
            headers={"Origin": ORIGIN},
        )
        assert refused.status_code == 413
        assert refused.headers["access-control-allow-origin"] == ORIGIN
