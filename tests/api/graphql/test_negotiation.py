"""Content negotiation on /graphql (GraphQL over HTTP): a query or a mutation
is one JSON answer whenever the client accepts JSON, whatever else it lists;
a stream only for what needs one or a client that accepts nothing else;
request errors are 400s without ``data`` under ``application/graphql-response+json``.

Each request goes every way the gateway answers it: the entry's direct path,
the prepared lane (a document already known) and Strawberry's full path (a
new one), with compiled execution and with ``PROOFGATE_EXECUTION=graphql-core``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import httpx
import pytest
from _asgi import answer as without_extensions
from conftest import Gateway, _serve, _settings
from graphql import parse

from api.graphql.negotiation import (
    APPLICATION_JSON,
    GRAPHQL_RESPONSE_JSON,
    json_answer,
    json_media_type,
    negotiated_accept,
    streams,
)
from api.settings.limits import PRESETS, Execution

URQL = (
    "application/graphql-response+json, application/graphql+json, application/json, "
    "text/event-stream, multipart/mixed"
)
APOLLO = "application/graphql-response+json,application/json;q=0.9"
SSE = "text/event-stream"


@pytest.mark.parametrize(
    ("accept", "answered_as"),
    [
        (None, APPLICATION_JSON),
        ("", APPLICATION_JSON),
        ("*/*", APPLICATION_JSON),
        ("application/json", APPLICATION_JSON),
        (URQL, GRAPHQL_RESPONSE_JSON),
        (APOLLO, GRAPHQL_RESPONSE_JSON),
        ("application/json, application/graphql-response+json", APPLICATION_JSON),
        ("application/json;q=0.5, application/graphql-response+json", GRAPHQL_RESPONSE_JSON),
        ("application/graphql-response+json;q=0, application/json", APPLICATION_JSON),
        ('multipart/mixed;subscriptionSpec="1.0",application/json', APPLICATION_JSON),
        ("text/html", APPLICATION_JSON),
        (SSE, None),
        ("text/event-stream, multipart/mixed", None),
    ],
)
def test_the_json_media_type_an_accept_header_asks_for(
    accept: str | None, answered_as: str | None
) -> None:
    assert json_media_type(accept) == answered_as


SUBSCRIPTION = 'subscription { threatAlerts(brandId: "b") { id } }'
REGISTERED = {"live": SUBSCRIPTION, "viewer": "{ viewer { role } }"}
TWO = f"query A {{ viewer {{ role }} }} subscription B {SUBSCRIPTION[13:]}"
APQ = {"persistedQuery": {"version": 1, "sha256Hash": "0" * 64}}


@pytest.mark.parametrize(
    ("body", "streamed"),
    [
        ({"query": "{ viewer { role } }"}, False),
        ({"query": 'mutation { verifyProduct(code: "x") { result } }'}, False),
        ({"query": SUBSCRIPTION}, True),
        ({"query": "query { viewer { role ... @defer { brandId } } }"}, True),
        (
            {
                "query": TWO,
                "operationName": "B",
            },
            True,
        ),
        (
            {
                "query": TWO,
                "operationName": "A",
            },
            False,
        ),
        ({"documentId": "live"}, True),
        ({"documentId": "viewer"}, False),
        ({"extensions": APQ}, True),  # the text is not in the request: as the client asked
        ({"extensions": json.dumps(APQ)}, True),  # a GET's
        ({"query": "{ viewer { role } "}, False),  # does not parse: a JSON 400
        ([{"query": SUBSCRIPTION}], False),  # a batch
        (None, False),  # a body that is not JSON
    ],
)
def test_which_operations_stream(body: object, streamed: bool) -> None:
    assert streams(body, parse, REGISTERED.get) is streamed
    media = negotiated_accept(URQL, lambda: body, parse, REGISTERED.get)
    assert media == (None if streamed else GRAPHQL_RESPONSE_JSON)


def test_a_request_error_is_a_400_without_data_only_under_graphql_response_json() -> None:
    refused = {"data": None, "errors": [{"message": "Syntax Error"}]}
    assert json_answer(refused, GRAPHQL_RESPONSE_JSON) == (400, {"errors": refused["errors"]})
    assert json_answer(refused, APPLICATION_JSON) == (200, refused)
    assert json_answer(refused, GRAPHQL_RESPONSE_JSON, 429)[0] == 429
    failed = {"data": None, "errors": [{"message": "boom", "path": ["brand"]}]}
    assert json_answer(failed, GRAPHQL_RESPONSE_JSON) == (200, failed)
    internal = {"errors": [{"message": "x", "extensions": {"code": "INTERNAL_SERVER_ERROR"}}]}
    assert json_answer({"data": None, **internal}, GRAPHQL_RESPONSE_JSON)[0] == 500


@pytest.fixture(scope="module", params=[Execution.COMPILED, Execution.GRAPHQL_CORE])
async def gateway(request: pytest.FixtureRequest) -> AsyncIterator[Gateway]:
    settings = _settings("sqlite", request)
    limits = replace(settings.limits, execution=PRESETS[request.param])
    settings = replace(settings, limits=limits)
    async with _serve(settings, "sqlite") as served:
        yield served


async def post(
    gateway: Gateway, body: dict[str, Any], accept: str | None, key: str | None = None
) -> httpx.Response:
    headers = {} if accept is None else {"Accept": accept}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    return await gateway.http.post("/graphql", json=body, headers=headers)


def fresh(query: str) -> str:
    """The query under a text no request sent before: the full path's first,
    the lane's from the second (``api/graphql/prepared.py``)."""
    return f"# {uuid.uuid4().hex}\n{query}"


@pytest.mark.storage_calls
@pytest.mark.parametrize("accept", [URQL, APOLLO, GRAPHQL_RESPONSE_JSON])
async def test_a_query_is_one_json_answer_first_and_prepared(gateway: Gateway, accept: str) -> None:
    brand = await gateway.register_brand("Negotiated")
    body = {"query": fresh("query($b: ID!) { brand(id: $b) { id name } }"), "variables": {}}
    body["variables"] = {"b": brand.id}
    answers = [await post(gateway, body, accept, brand.key) for _ in range(3)]
    for answer in answers:
        assert answer.status_code == 200
        assert answer.headers["content-type"] == GRAPHQL_RESPONSE_JSON
        assert without_extensions(answer.json()) == {
            "data": {"brand": {"id": brand.id, "name": "Negotiated"}}
        }
    get = await gateway.http.get(
        "/graphql",
        params={"query": body["query"], "variables": json.dumps(body["variables"])},
        headers={"Accept": accept, "Authorization": f"Bearer {brand.key}"},
    )
    assert (get.status_code, get.headers["content-type"]) == (200, GRAPHQL_RESPONSE_JSON)
    assert get.json() == answers[0].json()


async def test_the_prepared_lane_answers_a_streaming_accept_it_negotiated(
    gateway: Gateway,
) -> None:
    lane = gateway.app.state.graphql.prepared_lane
    if lane is None:
        assert gateway.app.state.settings.limits.execution == PRESETS[Execution.GRAPHQL_CORE]
        return
    body = {"query": fresh("{ viewer { role } }")}
    await post(gateway, body, URQL)
    answered = lane.answered
    again = await post(gateway, body, URQL)
    assert lane.answered == answered + 1
    assert again.headers["content-type"] == GRAPHQL_RESPONSE_JSON


@pytest.mark.parametrize("accept", [URQL, APOLLO, GRAPHQL_RESPONSE_JSON])
@pytest.mark.parametrize(
    ("query", "variables"),
    [
        ("{ viewer { role } ", {}),  # does not parse
        ("{ viewer { nope } }", {}),  # does not validate
        ("query($c: String!) { verification(code: $c) { result } }", {"c": 5}),  # nor coerce
        ("query($c: String!) { verification(code: $c) { result } }", {}),
    ],
    ids=["parse", "validation", "coercion", "missing-variable"],
)
async def test_request_errors_are_400_without_data_under_graphql_response_json(
    gateway: Gateway, accept: str, query: str, variables: dict[str, Any]
) -> None:
    body = {"query": query, "variables": variables}
    for _ in range(2):  # new, then a document the cache has seen
        refused = await post(gateway, body, accept)
        assert refused.status_code == 400, refused.text
        assert refused.headers["content-type"] == GRAPHQL_RESPONSE_JSON
        assert "data" not in refused.json()
        assert refused.json()["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    legacy = await post(gateway, body, APPLICATION_JSON)
    assert (legacy.status_code, legacy.headers["content-type"]) == (200, APPLICATION_JSON)
    assert legacy.json()["data"] is None


async def test_a_field_error_is_a_200_with_its_data(gateway: Gateway) -> None:
    body = {"query": '{ product(id: "no-such-product") { id } viewer { role } }'}
    for _ in range(2):
        answer = await post(gateway, body, URQL)
        assert answer.status_code == 200
        assert answer.json()["data"]["viewer"] == {"role": "ANONYMOUS"}


async def test_only_a_stream_accepted_is_answered_as_one(gateway: Gateway) -> None:
    body = {"query": fresh("{ viewer { role } }")}
    for _ in range(2):
        answer = await post(gateway, body, SSE)
        assert answer.headers["content-type"].startswith(SSE)
        assert answer.text.startswith('event: next\ndata: {"data":{"viewer":')
        assert answer.text.endswith("event: complete\ndata: \n\n")


async def test_incremental_delivery_streams_where_it_is_listed(gateway: Gateway) -> None:
    """@defer with urql's Accept: an event stream of its increments, the
    first of which has no ``stats``; Apollo's: parts, as before."""
    brand = await gateway.register_brand("Deferred")
    query = "query($b: ID!) { brand(id: $b) { id ... @defer { stats { threatCount } } } }"
    body = {"query": query, "variables": {"b": brand.id}}
    streamed = await post(gateway, body, URQL, brand.key)
    assert streamed.headers["content-type"].startswith(SSE)
    events = [
        json.loads(line.removeprefix("data: "))
        for line in streamed.text.split("\n")
        if line.startswith("data: {")
    ]
    assert events[0]["data"] == {"brand": {"id": brand.id}}
    assert events[0]["hasNext"] is True
    assert events[-1]["hasNext"] is False
    apollo = "multipart/mixed;deferSpec=20220824,application/json"
    parts = await post(gateway, body, apollo, brand.key)
    assert parts.headers["content-type"].startswith("multipart/mixed")
