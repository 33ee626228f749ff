"""The schema fuzz: thousands of operations generated from the real schema by
hypothesis-graphql (queries and mutations, valid and invalid), and malformed
bodies, sent over HTTP to a real app as the operator, as a brand and
anonymously; and the other ways in: every MCP tool called with generated
arguments (``/mcp``), and generated events, signed and not, posted to
``/ingest``. Whatever is sent, no answer is a 5xx or INTERNAL_SERVER_ERROR,
the log holds no error or traceback, and neither a brand nor an anonymous
caller ever sees what only another brand may (its verification codes, its
API key's name). The counts reach the CI log (``tests/conftest.py``)."""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from _asgi import codes, connect
from graphql import (
    BooleanValueNode,
    FloatValueNode,
    IntValueNode,
    NameNode,
    ObjectFieldNode,
    ObjectValueNode,
    StringValueNode,
    ValueNode,
)
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis_graphql import Mode, mutations, queries

from api.graphql.schema import schema as default_schema
from domain.ingest import INTEGRATION_HEADER, SIGNATURE_HEADER, signature_header

GENERATED_OPERATIONS = 3000
OPERATIONS_PER_EXAMPLE = 15
MALFORMED_BODIES = 300
BODIES_PER_EXAMPLE = 15
TOOL_CALLS = 150
INGEST_FIELDS = (
    *("eventId", "productId", "code", "type", "actor", "location"),
    *("latitude", "longitude", "occurredAt", "data"),
)
INGEST_POSTS = 300
SEED_PRODUCTS = 3


@dataclass
class Fuzzed:
    """The seeded store and what the fuzz has sent."""

    gateway: Any
    keys: dict[str, str | None]
    """Who sends: the operator, brand B, and nobody."""
    ids: list[str]
    codes: list[str]
    """Codes the fuzz may send: brand B's, public to whoever holds them."""
    secrets: list[str]
    """What only brand A (and the operator) may see."""
    ingest: tuple[str, str] = ("", "")
    """Brand B's integration: its id and ingest key."""
    sent: dict[str, int] = field(
        default_factory=lambda: {"operations": 0, "bodies": 0, "tools": 0, "ingest": 0}
    )

    def count(self, what: str, goal: int, record_property: Any) -> None:
        """One more sent; at the goal, the count goes to the CI log."""
        self.sent[what] += 1
        if self.sent[what] == goal:
            record_property(f"fuzz_{what}", goal)


async def _seed(gateway: Any) -> Fuzzed:
    owner = await gateway.register_brand("Fuzz A", plan="PRO", credits=20)
    other = await gateway.register_brand("Fuzz B", plan="PRO", credits=20)
    secret_name = f"secret-key-{uuid.uuid4().hex}"
    await gateway.data(
        """mutation($b: ID!, $n: String!) {
            createApiKey(brandId: $b, name: $n, role: PARTNER) { id }
        }""",
        {"b": owner.id, "n": secret_name},
        key=owner.key,
    )
    ids, codes, secrets = [owner.id, other.id, "missing"], [], [secret_name]
    for brand, mine in ((owner, False), (other, True)):
        for index in range(SEED_PRODUCTS):
            product = await gateway.register_product(brand, sku=f"FZ-{index}")
            ids.append(product["id"])
            (codes if mine else secrets).append(product["verificationCode"])
    await gateway.data(
        'mutation($p: ID!) { transferProduct(productId: $p, to: "Fuzz Owner") { id } }',
        {"p": ids[-1]},
        key=other.key,
    )
    keys = {"operator": gateway.admin_key, "brand": other.key, "anonymous": None}
    integration = await gateway.data(
        """mutation($b: ID!) {
            createIntegration(brandId: $b, name: "Fuzz", type: CARRIER) {
                ingestKey integration { id }
            }
        }""",
        {"b": other.id},
        key=other.key,
    )
    created = integration["createIntegration"]
    ingest = (created["integration"]["id"], created["ingestKey"])
    return Fuzzed(gateway, keys, ids, codes, secrets, ingest)


@pytest.fixture(scope="module")
async def fuzzed(sqlite_gateway: Any) -> AsyncIterator[Fuzzed]:
    """Fails at teardown if a fuzz test that ran here sent less than promised
    (hypothesis may end a test early)."""
    seeded = await _seed(sqlite_gateway)
    yield seeded
    goals = {
        "operations": GENERATED_OPERATIONS,
        "bodies": MALFORMED_BODIES,
        "tools": TOOL_CALLS,
        "ingest": INGEST_POSTS,
    }
    for what, goal in goals.items():
        assert seeded.sent[what] in range(1) or seeded.sent[what] >= goal, (what, seeded.sent)


def _strings(values: list[str]) -> st.SearchStrategy[ValueNode]:
    return st.sampled_from(values).map(lambda value: StringValueNode(value=value))


def _json_values() -> st.SearchStrategy[ValueNode]:
    member = ObjectFieldNode(name=NameNode(value="a"), value=IntValueNode(value="1"))
    return st.sampled_from(
        [ObjectValueNode(fields=(member,)), ObjectValueNode(fields=()), StringValueNode(value="x")]
    )


def _scalars(fuzz: Fuzzed) -> dict[str, st.SearchStrategy[ValueNode]]:
    return {
        "ID": _strings(fuzz.ids),
        "String": _strings(
            [*fuzz.codes, *fuzz.ids, "x", "", "é" * 40, "a" * 300, "2026-01", "\u0000", "\ud7ff"]
        ),
        "Int": st.integers(-2, 120).map(lambda value: IntValueNode(value=str(value))),
        "Float": st.sampled_from(["0", "45.5", "-181", "1e308"]).map(
            lambda value: FloatValueNode(value=value)
        ),
        "Boolean": st.booleans().map(lambda value: BooleanValueNode(value=value)),
        "Date": _strings(["2026-11-30", "2026-01-01", "9999-12-31", "x"]),
        "DateTime": _strings(
            [
                "2026-11-30T12:00:00Z",
                "9999-12-31T23:59:59.999999-14:00",
                "0001-01-01T00:00:00+14:00",
                "x",
            ]
        ),
        "Decimal": _strings(["1.00", "0.01", "999999999999999.99", "1e-2", "+5", "-1", "x"]),
        "JSON": _json_values(),
    }


def _operations(fuzz: Fuzzed) -> st.SearchStrategy[str]:
    graphql_schema = default_schema.graphql_schema
    scalars = _scalars(fuzz)
    valid = st.one_of(
        queries(graphql_schema, custom_scalars=scalars),
        mutations(graphql_schema, custom_scalars=scalars),
    )
    invalid = st.one_of(
        queries(graphql_schema, custom_scalars=scalars, mode=Mode.NEGATIVE),
        mutations(graphql_schema, custom_scalars=scalars, mode=Mode.NEGATIVE),
    )
    return st.one_of(valid, valid, valid, invalid).map(str)


def _errors_logged(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        f"{record.name}: {record.getMessage()}"
        for record in caplog.records
        if record.levelno >= logging.ERROR or record.exc_info
    ]


async def _check(fuzz: Fuzzed, response: Any, sent: str, who: str) -> None:
    assert response.status_code < 500, (sent, response.text)
    assert "Traceback" not in response.text, sent
    if response.headers.get("content-type", "").startswith("application/json"):
        body = response.json()
        codes = [(e.get("extensions") or {}).get("code") for e in body.get("errors") or []]
        assert "INTERNAL_SERVER_ERROR" not in codes, (sent, body)
    if who != "operator":
        leaked = [secret for secret in fuzz.secrets if secret in response.text]
        assert not leaked, (who, sent, leaked)


def _batches(examples: int) -> Any:
    """Hypothesis settings for a fuzz that sends a batch per example: the
    same batches every run, and a failing batch reported whole (shrinking
    it can take many minutes)."""
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
        phases=(Phase.explicit, Phase.generate),
    )


@_batches(GENERATED_OPERATIONS // OPERATIONS_PER_EXAMPLE)
@given(data=st.data())
async def test_generated_operations_never_fail_the_server(
    fuzzed: Fuzzed, data: st.DataObject, caplog: pytest.LogCaptureFixture, record_property: Any
) -> None:
    batch = st.lists(
        _operations(fuzzed), min_size=OPERATIONS_PER_EXAMPLE, max_size=OPERATIONS_PER_EXAMPLE
    )
    who = data.draw(st.sampled_from(sorted(fuzzed.keys)), label="who")
    key = fuzzed.keys[who]
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    with caplog.at_level(logging.ERROR):
        for operation in data.draw(batch, label="operations"):
            response = await fuzzed.gateway.http.post(
                "/graphql", json={"query": operation}, headers=headers
            )
            fuzzed.count("operations", GENERATED_OPERATIONS, record_property)
            await _check(fuzzed, response, operation, who)
    assert _errors_logged(caplog) == []


_JSON_LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20)
)
_JSON = st.recursive(
    _JSON_LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def _bodies() -> st.SearchStrategy[bytes]:
    shaped = st.fixed_dictionaries(
        {},
        optional={
            "query": st.one_of(
                st.text(max_size=60), _JSON, st.just("{ health { status } }"), st.just("{")
            ),
            "variables": _JSON,
            "operationName": st.one_of(st.text(max_size=10), _JSON),
            "extensions": _JSON,
        },
    ).map(lambda body: json.dumps(body).encode())
    return st.one_of(st.binary(max_size=200), _JSON.map(lambda v: json.dumps(v).encode()), shaped)


@_batches(MALFORMED_BODIES // BODIES_PER_EXAMPLE)
@given(data=st.data())
async def test_malformed_bodies_never_fail_the_server(
    fuzzed: Fuzzed, data: st.DataObject, caplog: pytest.LogCaptureFixture, record_property: Any
) -> None:
    batch = st.lists(_bodies(), min_size=BODIES_PER_EXAMPLE, max_size=BODIES_PER_EXAMPLE)
    with caplog.at_level(logging.ERROR):
        for body in data.draw(batch, label="bodies"):
            response = await fuzzed.gateway.http.post(
                "/graphql", content=body, headers={"Content-Type": "application/json"}
            )
            fuzzed.count("bodies", MALFORMED_BODIES, record_property)
            await _check(fuzzed, response, repr(body), "anonymous")
    assert _errors_logged(caplog) == []


async def test_an_operation_name_that_is_not_a_string_is_bad_user_input(
    fuzzed: Fuzzed, caplog: pytest.LogCaptureFixture
) -> None:
    """Found by the fuzz: a JSON object as operationName reached the metrics
    as a label and failed the request with a 500."""
    body = b'{"query": "{ health { status } }", "operationName": {"": null}}'
    with caplog.at_level(logging.ERROR):
        response = await fuzzed.gateway.http.post(
            "/graphql", content=body, headers={"Content-Type": "application/json"}
        )
    assert response.status_code == 400
    assert codes(response.json()) == ["BAD_USER_INPUT"]
    assert _errors_logged(caplog) == []


def _argument(fuzz: Fuzzed) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.sampled_from([*fuzz.ids, *fuzz.codes, "", "x", "2026-01", "é" * 40]),
        st.integers(-2, 200),
        _JSON,
    )


def _tool_calls(fuzz: Fuzzed, tools: dict[str, list[str]]) -> st.SearchStrategy[Any]:
    """Every tool, its own argument names (and strangers) with values of any type."""

    def call(name: str) -> st.SearchStrategy[Any]:
        names = st.sampled_from([*tools[name], "extra", ""])
        arguments = st.dictionaries(names, _argument(fuzz), max_size=4)
        return st.one_of(arguments, _JSON).map(lambda args: {"name": name, "arguments": args})

    calls = st.sampled_from(sorted(tools)).flatmap(call)
    return st.one_of(calls, calls, calls, _JSON.map(lambda params: {"name": "x", "p": params}))


@_batches(TOOL_CALLS // 10)
@given(data=st.data())
async def test_generated_tool_calls_never_fail_the_server(
    fuzzed: Fuzzed, data: st.DataObject, caplog: pytest.LogCaptureFixture, record_property: Any
) -> None:
    specs = fuzzed.gateway.app.state.mcp.tools
    tools = {name: sorted(spec.input_schema.get("properties", {})) for name, spec in specs.items()}
    who = data.draw(st.sampled_from(sorted(fuzzed.keys)), label="who")
    key = fuzzed.keys[who]
    headers = {"Accept": "application/json, text/event-stream"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    batch = st.lists(_tool_calls(fuzzed, tools), min_size=10, max_size=10)
    with caplog.at_level(logging.ERROR):
        for params in data.draw(batch, label="calls"):
            message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
            response = await fuzzed.gateway.http.post("/mcp", json=message, headers=headers)
            fuzzed.count("tools", TOOL_CALLS, record_property)
            await _check(fuzzed, response, repr(params), who)
            assert "INTERNAL_SERVER_ERROR" not in response.text, (params, response.text)
    assert _errors_logged(caplog) == []


def _events(fuzz: Fuzzed) -> st.SearchStrategy[bytes]:
    fields = st.sampled_from([*INGEST_FIELDS, "extra"])
    values = st.one_of(
        _argument(fuzz),
        st.sampled_from(["SHIPPED", "INSPECTED", "RECALLED", "9999-12-31T23:59:59Z", "x"]),
        st.floats(allow_nan=False),
    )
    shaped = st.dictionaries(fields, values, max_size=8).map(lambda e: json.dumps(e).encode())
    return st.one_of(shaped, shaped, _JSON.map(lambda v: json.dumps(v).encode()), st.binary())


@_batches(INGEST_POSTS // BODIES_PER_EXAMPLE)
@given(data=st.data())
async def test_generated_ingest_posts_never_fail_the_server(
    fuzzed: Fuzzed, data: st.DataObject, caplog: pytest.LogCaptureFixture, record_property: Any
) -> None:
    """Signed with the integration's key (so the body is read), signed
    wrongly, or with a malformed signature header."""
    integration, key = fuzzed.ingest
    signatures = st.sampled_from(["valid", "t=1,v1=00", "t=²", "", "v1=x"])
    batch = st.lists(
        st.tuples(_events(fuzzed), signatures, st.sampled_from(["shipping", "pos"])),
        min_size=BODIES_PER_EXAMPLE,
        max_size=BODIES_PER_EXAMPLE,
    )
    with caplog.at_level(logging.ERROR):
        for body, signature, source in data.draw(batch, label="posts"):
            header = (
                signature_header(key, int(time.time()), body) if signature == "valid" else signature
            )
            # Each from an address of its own: wrong signatures spend the
            # address's failed-auth bucket, which the other fuzz tests share.
            sent = fuzzed.sent["ingest"]
            address = (f"198.18.{sent // 250}.{sent % 250 + 1}", 4000)
            async with connect(fuzzed.gateway.app, address) as http:
                response = await http.post(
                    f"/ingest/{source}",
                    content=body,
                    headers={
                        "Content-Type": "application/json",
                        INTEGRATION_HEADER: integration,
                        SIGNATURE_HEADER: header.encode("latin-1", "replace"),
                    },
                )
            fuzzed.count("ingest", INGEST_POSTS, record_property)
            await _check(fuzzed, response, repr(body), "brand")
    assert _errors_logged(caplog) == []
