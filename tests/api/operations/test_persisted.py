"""Automatic persisted queries (Apollo's protocol) over POST and GET."""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from _asgi import answer, codes
from _limits import Client, serve

from api.operations.persisted import NOT_FOUND, NOT_SUPPORTED, PersistedQueryStore
from api.settings.limits import Limits
from domain.errors import BadUserInput

QUERY = "query($n: Int) { explore(first: $n) { edges { node { id } } } }"


def persisted(query: str) -> dict[str, Any]:
    return {
        "persistedQuery": {"version": 1, "sha256Hash": hashlib.sha256(query.encode()).hexdigest()}
    }


async def get(client: Client, params: dict[str, str]) -> httpx.Response:
    response = await client.http.get("/graphql", params=params)
    assert response.headers["content-type"].startswith("application/json"), response.text[:200]
    return response


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    async with serve() as client:
        yield client


async def test_round_trip_over_post(client: Client) -> None:
    query = QUERY + " # post"
    unknown = (await client.post(None, {"n": 1}, extensions=persisted(query))).json()
    assert unknown["data"] is None
    assert [e["message"] for e in unknown["errors"]] == [NOT_FOUND]
    assert codes(unknown) == ["PERSISTED_QUERY_NOT_FOUND"]  # Apollo Server's code
    registered = (await client.post(query, {"n": 1}, extensions=persisted(query))).json()
    assert answer(registered) == {"data": {"explore": {"edges": []}}}
    known = (await client.post(None, {"n": 1}, extensions=persisted(query))).json()
    assert answer(known) == {"data": {"explore": {"edges": []}}}


async def test_round_trip_over_get(client: Client) -> None:
    """A browser's fetch accepts ``*/*``: the hash alone must not get the explorer page."""
    query = QUERY + " # get"
    params = {"extensions": json.dumps(persisted(query)), "variables": json.dumps({"n": 1})}
    unknown = await get(client, params)
    assert [e["message"] for e in unknown.json()["errors"]] == [NOT_FOUND]
    registered = await get(client, {**params, "query": query})
    assert answer(registered.json()) == {"data": {"explore": {"edges": []}}}
    known = await get(client, params)
    assert answer(known.json()) == {"data": {"explore": {"edges": []}}}


async def test_a_persisted_mutation_is_refused_over_get(client: Client) -> None:
    mutation = 'mutation { verifyProduct(code: "unknown") { result } }'
    assert (await client.post(mutation, extensions=persisted(mutation))).status_code == 200
    response = await client.http.get(
        "/graphql", params={"extensions": json.dumps(persisted(mutation))}
    )
    assert response.status_code == 400
    assert "mutations are not allowed" in response.text


async def test_a_hash_that_does_not_match_is_refused(client: Client) -> None:
    body = (await client.post(QUERY, {"n": 1}, extensions=persisted(QUERY + " "))).json()
    assert body["data"] is None
    assert codes(body) == ["BAD_USER_INPUT"]
    assert body["errors"][0]["message"] == "provided sha does not match query"


@pytest.mark.parametrize(
    "extension",
    [{"version": 2, "sha256Hash": "0" * 64}, {"version": 1, "sha256Hash": "xyz"}, "nonsense"],
    ids=["version", "hash", "shape"],
)
async def test_malformed_extensions_are_refused(client: Client, extension: object) -> None:
    body = (await client.post(QUERY, {"n": 1}, extensions={"persistedQuery": extension})).json()
    assert codes(body) == ["BAD_USER_INPUT"]


async def test_persisted_queries_are_checked_like_any_other(client: Client) -> None:
    query = (
        "{ explore(first: 100) { edges { node { provenance(first: 100) { id: __typename } } } } }"
    )
    await client.post(query, extensions=persisted(query))
    body = (await client.post(None, extensions=persisted(query))).json()
    assert codes(body) == ["QUERY_TOO_COMPLEX"]


async def test_apq_off() -> None:
    async with serve(Limits(persisted_queries=0)) as client:
        body = (await client.post(QUERY, {"n": 1}, extensions=persisted(QUERY))).json()
        assert [e["message"] for e in body["errors"]] == [NOT_SUPPORTED]


def test_the_store_keeps_the_most_recently_used() -> None:
    store = PersistedQueryStore(capacity=2)
    queries = ["{ a }", "{ b }", "{ c }"]
    for query in queries[:2]:
        store.resolve(query, persisted(query)["persistedQuery"])
    store.resolve(None, persisted("{ a }")["persistedQuery"])
    store.resolve("{ c }", persisted("{ c }")["persistedQuery"])
    assert len(store) == 2
    assert store.resolve(None, persisted("{ a }")["persistedQuery"]) == "{ a }"
    with pytest.raises(BadUserInput, match=NOT_FOUND):
        store.resolve(None, persisted("{ b }")["persistedQuery"])


def test_the_store_is_bounded_in_bytes_too() -> None:
    store = PersistedQueryStore(capacity=10, max_bytes=25)
    small, large, huge = "{ a }", "{ " + "b" * 12 + " }", "{ " + "c" * 30 + " }"
    for query in (small, large, huge):
        assert store.resolve(query, persisted(query)["persistedQuery"]) == query
    assert len(store) == 2
    assert store.resolve(None, persisted(small)["persistedQuery"]) == small
    other = "{ " + "d" * 10 + " }"
    store.resolve(other, persisted(other)["persistedQuery"])
    with pytest.raises(BadUserInput, match=NOT_FOUND):
        store.resolve(None, persisted(large)["persistedQuery"])
    with pytest.raises(BadUserInput, match=NOT_FOUND):
        store.resolve(None, persisted(huge)["persistedQuery"])


def test_four_byte_characters_count_four_times() -> None:
    """The bound is bytes: 20 four-byte characters (80 bytes) are over 50,
    though 20 characters are not; 20 ASCII ones are kept (the control)."""
    store = PersistedQueryStore(capacity=10, max_bytes=50)
    wide, narrow = "#" + "\U0001f600" * 20, "#" + "x" * 20
    for query in (wide, narrow):
        assert store.resolve(query, persisted(query)["persistedQuery"]) == query
    with pytest.raises(BadUserInput, match=NOT_FOUND):
        store.resolve(None, persisted(wide)["persistedQuery"])
    assert store.resolve(None, persisted(narrow)["persistedQuery"]) == narrow
    third = "#" + "\u00e9" * 15  # 31 bytes: with narrow's 21, over 50, so narrow goes
    store.resolve(third, persisted(third)["persistedQuery"])
    with pytest.raises(BadUserInput, match=NOT_FOUND):
        store.resolve(None, persisted(narrow)["persistedQuery"])
