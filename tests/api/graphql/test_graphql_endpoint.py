"""/graphql as mounted by the app: GraphiQL, GET queries, authentication, logging."""

from __future__ import annotations

import logging

import pytest


async def test_graphiql_for_browsers(gateway) -> None:
    response = await gateway.http.get("/graphql", headers={"Accept": "text/html"})
    assert response.status_code == 200
    assert "graphiql" in response.text.lower()


async def test_queries_over_get(gateway) -> None:
    response = await gateway.http.get("/graphql", params={"query": "{ health { status storage } }"})
    assert response.status_code == 200
    assert response.json()["data"]["health"] == {"status": "ok", "storage": gateway.backend}


@pytest.mark.parametrize("authorization", ["Bearer pg_unknown", "Basic abc", "Bearer "])
async def test_bad_keys_are_401(gateway, authorization: str) -> None:
    response = await gateway.http.post(
        "/graphql", json={"query": "{ viewer { role } }"}, headers={"Authorization": authorization}
    )
    assert response.status_code == 401
    assert gateway.codes(response.json()) == ["UNAUTHENTICATED"]


async def test_requests_strawberry_refuses_get_graphql_shaped_errors(gateway) -> None:
    mutation = await gateway.http.get(
        "/graphql",
        params={"query": 'mutation { verifyProduct(code: "AAAA-BBBB-CCCC") { result } }'},
        headers={"Accept": "application/json"},
    )
    not_json = await gateway.http.post(
        "/graphql", content="{not json", headers={"Content-Type": "application/json"}
    )
    for response in (mutation, not_json):
        assert response.status_code == 400
        assert response.json()["data"] is None
        assert gateway.codes(response.json()) == ["BAD_USER_INPUT"]
    assert "GET" in mutation.json()["errors"][0]["message"]


async def test_anonymous_viewer(gateway) -> None:
    assert (await gateway.data("{ viewer { role brandId } }"))["viewer"] == {
        "role": "ANONYMOUS",
        "brandId": None,
    }


async def test_client_errors_are_not_logged_as_incidents(
    gateway, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR):
        body = await gateway.execute(
            '{ product(id: "01ARZ3NDEKTSV4RRFFQ69G5FAV") { id } }', key=gateway.admin_key
        )
    assert gateway.codes(body) == ["NOT_FOUND"]
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


async def test_the_trace_answers_only_callers_with_a_key(gateway) -> None:
    query = "{ explore(first: 1) { edges { node { id } } } }"
    anonymous = await gateway.execute(query, trace=True)
    keyed = await gateway.execute(query, key=gateway.admin_key, trace=True)

    assert "errors" not in anonymous and "errors" not in keyed
    assert "trace" in keyed.get("extensions", {})
    assert "trace" not in anonymous.get("extensions", {})
    # The cost, but not what was read (docs/design.md, Costs on every response).
    assert anonymous["extensions"]["cost"]["requestedQueryCost"] == 2
    assert anonymous["extensions"]["cost"]["actualQueryCost"] is None
    assert keyed["extensions"]["cost"]["actualQueryCost"]["storageCalls"] >= 1
