"""POST /graphql answers alike through ``GraphQLEntry`` and the middleware stack.

Every query the suite sends (in turn as admin, a brand and anonymous), deterministic
mutations and refusals, and the requests the HTTP layers themselves decide
(a form content type, the CSRF header, a body over the limit declared and
not, malformed JSON, a plain and a forged request id, an allowed and a foreign
``Origin``) are each sent three times: stack, entry, stack. When the two
stack answers agree, the entry's must equal them: status, every response
header, the body text and the request's log line. A fault planted in the
entry must be caught, and an exception answers the same 500 both ways.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from datetime import timedelta
from itertools import chain
from typing import Any

import pytest
from _exchanges import Exchange, request_lines
from conftest import Gateway, _serve, _settings, with_lanes

import api.graphql.entry
from api.app import ProofgateApp
from api.graphql.entry import GraphQLEntry
from tests.api.graphql.execution._differential import Seed, seed_variables, suite_operations

pytestmark = pytest.mark.fast_paths

ORIGIN = "https://app.example"
MUTATIONS = [
    ("mutation($c: String!) { verifyProduct(code: $c) { result product { id } } }", "nope"),
    ('mutation { registerBrand(input: {name: "X", domain: "x.example"}) { apiKey } }', None),
]
REFUSALS = [
    "query($b: ID!) { brand(id: $b) { products(first: 100000) { edges { node { id } } } } }",
    "query A { health { status } } query B { viewer { role } }",
    "{ viewer { role } ",
]


class Comparison:
    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.app: ProofgateApp = gateway.app  # type: ignore[assignment]
        entry = self.app.graphql_entry
        assert entry is not None
        self.entry: GraphQLEntry = entry
        self.taken = 0
        self.compared = 0
        self.mismatches: list[tuple[str, dict[str, str]]] = []

    async def send(self, content: bytes, headers: dict[str, str], *, entry: bool) -> Exchange:
        self.app.graphql_entry = self.entry if entry else None
        taken = self.entry.observer.record

        def counted(*arguments: Any) -> None:
            self.taken += 1
            taken(*arguments)

        self.entry.observer.record = counted  # type: ignore[method-assign]
        try:
            with request_lines() as lines:
                response = await self.gateway.http.post(
                    "/graphql", content=content, headers=headers
                )
        finally:
            self.app.graphql_entry = self.entry
            del self.entry.observer.record
        (fields,) = lines.fields
        fields.pop("durationMs")
        response_headers = tuple(response.headers.multi_items())
        if "X-Request-Id" not in headers:
            # A new id each time, the same way: its shape is compared, not its value.
            response_headers = tuple(
                (k, v if k != "x-request-id" else str(len(v))) for k, v in response_headers
            )
            fields["requestId"] = len(fields["requestId"])
            sent_id = response.headers.get("x-request-id")  # none: a fault planted
            response_text = response.text.replace(sent_id, "<id>") if sent_id else response.text
        else:
            response_text = response.text
        if fields["errorCodes"]:
            del fields["storageCalls"], fields["capacityUnits"]  # timing, as test_prepared says
        return Exchange(
            response.status_code, response_headers, response_text, tuple(sorted(fields.items()))
        )

    async def agree(self, content: bytes, headers: dict[str, str]) -> bool:
        before = await self.send(content, headers, entry=False)
        taken = self.taken
        through_entry = await self.send(content, headers, entry=True)
        assert self.taken == taken + 1, "the entry took the request"
        after = await self.send(content, headers, entry=False)
        if before != after:
            return True  # not deterministic: nothing to compare against
        self.compared += 1
        if through_entry != after:
            self.mismatches.append((content.decode(errors="replace")[:200], headers))
            return False
        return True


@pytest.fixture(scope="module")
async def seeded(request: pytest.FixtureRequest) -> AsyncIterator[tuple[Gateway, Seed, str]]:
    base = with_lanes(_settings("sqlite", request))
    # Every request reads its key, as it would without the key cache: a cached
    # key expiring between the stack's request and the entry's would count one
    # storage call more on one side (docs/design.md, API keys).
    settings = replace(
        base, cors_origins=(ORIGIN,), pipeline=replace(base.pipeline, key_cache=timedelta(0))
    )
    async with _serve(settings, "sqlite") as gateway:
        seed = Seed()
        brand = await gateway.register_brand("Entry", plan="PRO", credits=20)
        seed.brand_ids.append(brand.id)
        for index in range(2):
            product = await gateway.register_product(brand, sku=f"SKU-{index}")
            seed.product_ids.append(product["id"])
            seed.codes.append(product["verificationCode"])
            seed.hashes.append(product["certificate"]["hash"])
        yield gateway, seed, brand.key


def _http_cases() -> Iterator[tuple[bytes, dict[str, str]]]:
    """What the layers before the view decide, each with and without an id."""
    small = json.dumps({"query": "{ viewer { role } }"}).encode()
    json_type = {"Content-Type": "application/json"}
    yield small, {"Content-Type": "text/plain"}
    yield small, {"Content-Type": "text/plain", "X-Proofgate-CSRF": "1"}
    yield (
        small,
        {"Content-Type": "application/x-www-form-urlencoded", "Apollo-Require-Preflight": "1"},
    )
    yield small, {"Content-Type": "application/graphql-response+json; charset=utf-8"}
    yield small, {**json_type, "Content-Length": str(10**9)}
    yield b'{"query": "' + b"x" * (2 * 1024 * 1024) + b'"}', json_type
    yield b'{"query": ', json_type
    yield b'[{"query": "{ viewer { role } }"}]', json_type
    yield small, {**json_type, "X-Request-Id": "lb-7f3a.42"}
    yield small, {**json_type, "X-Request-Id": "forged line\nbreak"}
    yield small, {**json_type, "Origin": ORIGIN}
    yield small, {**json_type, "Origin": "https://elsewhere.example"}
    yield small, {"Content-Type": "text/plain", "Origin": ORIGIN}


def _direct_path_cases(gateway: Gateway) -> Iterator[tuple[bytes, dict[str, str]]]:
    """What the entry's direct path leaves to the stack's functions: a
    streaming ``Accept``, a trace header (answered for a key only)."""
    small = json.dumps({"query": "{ viewer { role } }"}).encode()
    json_type = {"Content-Type": "application/json", "X-Request-Id": "direct-1"}
    yield small, {**json_type, "Accept": "multipart/mixed;deferSpec=20220824, application/json"}
    yield small, {**json_type, "Accept": "text/event-stream"}
    urql = "application/graphql-response+json, application/json, text/event-stream"
    yield small, {**json_type, "Accept": urql}
    yield b'{"query": "{ viewer { role } "}', {**json_type, "Accept": urql}
    admin = {**json_type, "Authorization": f"Bearer {gateway.admin_key}"}
    yield small, {**admin, "X-Proofgate-Trace": "1"}


def _operation_cases(
    gateway: Gateway, seed: Seed, key: str
) -> Iterator[tuple[bytes, dict[str, str]]]:
    schema = gateway.app.state.graphql.schema.graphql_schema
    cases = [(text, seed_variables(text, seed)) for text in suite_operations(schema)]
    cases += [(text, {"c": "no-such-code"} if value else {}) for text, value in MUTATIONS]
    cases += [(text, {"b": seed.brand_ids[0]}) for text in REFUSALS]
    callers = (gateway.admin_key, key, None)
    for index, (text, variables) in enumerate(cases):
        content = json.dumps({"query": text, "variables": variables}).encode()
        headers = {"Content-Type": "application/json", "X-Request-Id": f"entry-{index}"}
        authorization = callers[index % len(callers)]
        if authorization:
            headers["Authorization"] = f"Bearer {authorization}"
        if index % 5 == 0:
            headers["Origin"] = ORIGIN
        if index % 4 == 1:
            headers["Accept"] = "application/graphql-response+json,application/json;q=0.9"
        yield content, headers


async def _corpus(
    gateway: Gateway, seed: Seed, key: str, *, until_mismatch: bool = False
) -> Comparison:
    comparison = Comparison(gateway)
    cases = chain(_http_cases(), _direct_path_cases(gateway), _operation_cases(gateway, seed, key))
    for content, headers in cases:
        if not await comparison.agree(content, headers) and until_mismatch:
            break
    return comparison


async def test_every_request_answers_alike_through_the_entry(seeded: Any) -> None:
    comparison = await _corpus(*seeded)
    assert comparison.mismatches == []
    assert comparison.compared >= 60


def _forget_the_request_id(monkeypatch: pytest.MonkeyPatch, entry: GraphQLEntry) -> None:
    monkeypatch.setattr(api.graphql.entry, "_REQUEST_ID", b"x-not-the-request-id")


def _no_cors(monkeypatch: pytest.MonkeyPatch, entry: GraphQLEntry) -> None:
    monkeypatch.setattr(entry, "cors", None)


def _csrf_header_unread(monkeypatch: pytest.MonkeyPatch, entry: GraphQLEntry) -> None:
    monkeypatch.setattr(api.graphql.entry, "_PREFLIGHT", frozenset())


def _answer_without_the_id(monkeypatch: pytest.MonkeyPatch, entry: GraphQLEntry) -> None:
    monkeypatch.setattr(api.graphql.entry, "_ID_HEADER", b"x-request-ref")


def _streams_taken_direct(monkeypatch: pytest.MonkeyPatch, entry: GraphQLEntry) -> None:
    monkeypatch.setattr(api.graphql.entry, "_streaming", lambda accept: False)


def _answered_as_plain_json(monkeypatch: pytest.MonkeyPatch, entry: GraphQLEntry) -> None:
    monkeypatch.setattr(api.graphql.entry, "json_media_type", lambda accept: None)


def _trace_header_unread(monkeypatch: pytest.MonkeyPatch, entry: GraphQLEntry) -> None:
    monkeypatch.setattr(api.graphql.entry, "_TRACE", b"x-not-the-trace-header")


@pytest.mark.parametrize(
    "plant",
    [
        _forget_the_request_id,
        _no_cors,
        _csrf_header_unread,
        _answer_without_the_id,
        _streams_taken_direct,
        _answered_as_plain_json,
        _trace_header_unread,
    ],
)
async def test_a_fault_planted_in_the_entry_is_caught(
    seeded: Any, monkeypatch: pytest.MonkeyPatch, plant: Any
) -> None:
    gateway = seeded[0]
    plant(monkeypatch, gateway.app.graphql_entry)
    comparison = await _corpus(*seeded, until_mismatch=True)
    assert comparison.mismatches


async def _raw(app: ProofgateApp, body: bytes) -> tuple[list[dict[str, Any]], BaseException | None]:
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "http", "path": "/graphql", "raw_path": b"/graphql", "query_string": b"",
        "root_path": "", "client": ("127.0.0.1", 9), "server": ("testserver", 80),
        "headers": [(b"content-type", b"application/json"), (b"x-request-id", b"boom-1")],
    }  # fmt: skip
    sent: list[dict[str, Any]] = []
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        delivered = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: Any) -> None:
        sent.append(dict(message))

    try:
        await app(scope, receive, send)
    except RuntimeError as error:
        return sent, error
    return sent, None


async def test_an_exception_answers_the_same_500_and_reaches_the_server(
    seeded: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    gateway = seeded[0]
    app: ProofgateApp = gateway.app
    entry = app.graphql_entry

    async def failing(scope: Any, receive: Any, send: Any) -> None:
        raise RuntimeError("planted")

    monkeypatch.setattr(app.state, "graphql", failing)
    assert entry is not None
    monkeypatch.setattr(entry, "graphql", failing)  # the entry's copy, set by the lifespan
    body = json.dumps({"query": "{ viewer { role } }"}).encode()
    answers = []
    for through_entry in (False, True):
        app.graphql_entry = entry if through_entry else None
        with request_lines() as lines:
            sent, error = await _raw(app, body)
        app.graphql_entry = entry
        assert isinstance(error, RuntimeError), "re-raised for the server to log"
        (fields,) = lines.fields
        fields.pop("durationMs")
        answers.append((sent, fields))
    assert answers[0] == answers[1]
    assert answers[0][0][0]["status"] == 500 and answers[0][1]["status"] == 500
