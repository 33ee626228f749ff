"""The prepared lane answers exactly what Strawberry's full path answers.

Every query the suite and the explorer send, deterministic mutations and
refusals, and queries generated from the schema by hypothesis-graphql are
each sent three times under one request id: lane off (which also validates
the text into the document cache), lane on, lane off. When the two full-path
answers agree (the operation is deterministic), the lane's must equal them:
status, the headers a client reads, the body text (key and error order
included) and the request's log line (operation, principal, error codes,
and for an answer without errors its storage calls and capacity). A lane
broken on purpose must be caught.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from _exchanges import Exchange, request_lines
from conftest import Brand, Gateway, _serve, _settings, with_lanes
from execution._differential import (
    Seed,
    generated_queries,
    generated_settings,
    seed_variables,
    suite_operations,
)
from hypothesis import given
from hypothesis import strategies as st

import api.graphql.execution.executor
import api.graphql.prepared
from api.graphql.execution.executor import OperationStart
from api.graphql.prepared import PreparedLane, PreparedOperation, prepared_lane
from api.graphql.schema import build_schema
from api.settings.limits import Execution, Limits
from api.settings.operations import TrustedDocuments
from tests._support.source import ROOT

pytestmark = pytest.mark.fast_paths

GENERATED_QUERIES = 300
QUERIES_PER_EXAMPLE = 10
_HEADERS = ("content-type", "retry-after", "x-request-id")
PYPROJECT = ROOT / "pyproject.toml"

VERIFY = """mutation($c: String!) {
  verifyProduct(code: $c, scan: {country: "FR"}) {
    result authentic signatureValid chainIntact product { id name brand { name } }
  }
}"""
MUTATIONS = [
    (VERIFY, "code"),
    (VERIFY, "missing"),
    (VERIFY, "int"),
    ('mutation($p: ID!) { recallProduct(productId: $p, reason: "again") { id } }', "recalled"),
    ('mutation { registerBrand(input: {name: "X", domain: "x.example"}) { apiKey } }', None),
]
REFUSALS = [
    "query($b: ID!) { brand(id: $b) { products(first: 100000) { edges { node { id } } } } }",
    "query A { health { status } } query B { viewer { role } }",
    "{ viewer { role } }",
]
ACCEPTS = (
    None,
    "application/graphql-response+json,application/json;q=0.9",
    "application/graphql-response+json, application/graphql+json, application/json, "
    "text/event-stream, multipart/mixed",
)
"""No ``Accept``, Apollo Client's and urql's: each negotiated alike on both
paths (``api/graphql/negotiation.py``)."""
TWO_OPERATIONS = "query A { health { status } } query B { viewer { role brandId } }"
PRODUCT = "query($p: ID!) { product(id: $p) { id name status } }"
"""Sent once per product: one document, its variables different each time."""


class Comparison:
    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.graphql = gateway.app.state.graphql
        self.lane: PreparedLane = self.graphql.prepared_lane
        self.compared = 0
        self.laned = 0
        self.mismatches: list[tuple[str, str | None]] = []
        self.difference: tuple[Exchange, Exchange] | None = None
        """The last mismatch's exchanges, the lane's and the full path's."""

    async def send(
        self, body: dict[str, Any], key: str | None, *, lane: bool, **headers: str
    ) -> Exchange:
        headers.setdefault("X-Request-Id", f"prepared-{self.compared}")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self.graphql.prepared_lane = self.lane if lane else None
        try:
            with request_lines() as lines:
                response = await self.gateway.http.post("/graphql", json=body, headers=headers)
        finally:
            self.graphql.prepared_lane = self.lane
        (fields,) = lines.fields
        fields.pop("durationMs")
        if fields["errorCodes"]:
            # Loads a field queued before a sibling's error ended the operation
            # run whenever the loop next turns, before or after the line is
            # written, on either path: their count is timing, not behaviour.
            del fields["storageCalls"], fields["capacityUnits"]
        return Exchange(
            response.status_code,
            tuple((name, response.headers.get(name)) for name in _HEADERS),
            response.text,
            tuple(sorted(fields.items())),
        )

    async def agree(self, body: dict[str, Any], key: str | None = None, **headers: str) -> bool:
        """False (and noted) when the lane answered otherwise than the full path."""
        before = await self.send(body, key, lane=False, **headers)
        answered = self.lane.answered
        laned = await self.send(body, key, lane=True, **headers)
        after = await self.send(body, key, lane=False, **headers)
        self.laned += self.lane.answered - answered
        if before != after:
            return True  # not deterministic: nothing to compare against
        self.compared += 1
        if laned != after:
            self.mismatches.append((str(body.get("query")), key))
            self.difference = (laned, after)
            return False
        return True


@pytest.fixture(scope="module")
async def keys_read_gateway(request: pytest.FixtureRequest) -> AsyncIterator[Gateway]:
    """Every request reads its key, as it would without the key cache: a
    cached key expiring between the full path's request and the lane's would
    count one storage call more on one side (docs/design.md, API keys)."""
    base = with_lanes(_settings("sqlite", request))
    settings = replace(base, pipeline=replace(base.pipeline, key_cache=timedelta(0)))
    async with _serve(settings, "sqlite") as gateway:
        yield gateway


@pytest.fixture(scope="module")
async def seeded(keys_read_gateway: Gateway) -> tuple[Gateway, Seed, Brand]:
    gateway = keys_read_gateway
    seed = Seed()
    brand = await gateway.register_brand("Prepared", plan="PRO", credits=50)
    seed.brand_ids.append(brand.id)
    for index in range(4):
        product = await gateway.register_product(brand, sku=f"SKU-{index}")
        seed.product_ids.append(product["id"])
        seed.codes.append(product["verificationCode"])
        seed.hashes.append(product["certificate"]["hash"])
    await gateway.data(
        'mutation($p: ID!) { recallProduct(productId: $p, reason: "test") { id } }',
        {"p": seed.product_ids[-1]},
        key=brand.key,
    )
    return gateway, seed, brand


def _mutation_variables(value: str | None, seed: Seed) -> dict[str, Any]:
    chosen = {
        None: {},
        "code": {"c": seed.codes[0]},
        "missing": {"c": "no-such-code"},
        "int": {"c": 5},
        "recalled": {"p": seed.product_ids[-1]},
    }
    return chosen[value]


async def _corpus(
    gateway: Gateway, seed: Seed, brand: Brand, *, until_mismatch: bool = False
) -> Comparison:
    """Every suite, mutation and refusal case, as admin, brand and anonymous."""
    comparison = Comparison(gateway)
    cases = [(text, seed_variables(text, seed)) for text in suite_operations(_schema(gateway))]
    cases += [(text, _mutation_variables(value, seed)) for text, value in MUTATIONS]
    cases += [(text, {"b": seed.brand_ids[0]}) for text in REFUSALS]
    cases += [(PRODUCT, {"p": product}) for product in seed.product_ids]
    bodies = [{"query": text, "variables": variables} for text, variables in cases]
    bodies += [{"query": TWO_OPERATIONS, "operationName": name} for name in ("B", "A", "C")]
    for index, body in enumerate(bodies):
        for key in (gateway.admin_key, brand.key, None):
            accept = ACCEPTS[index % len(ACCEPTS)]
            agreed = await comparison.agree(body, key, **({"Accept": accept} if accept else {}))
            if until_mismatch and not agreed:
                return comparison
    return comparison


def _schema(gateway: Gateway) -> Any:
    return gateway.app.state.graphql.schema.graphql_schema


async def test_every_suite_operation_mutation_and_refusal_answers_alike(seeded: Any) -> None:
    comparison = await _corpus(*seeded)
    assert comparison.mismatches == []
    assert comparison.compared >= 100
    assert comparison.laned > comparison.compared // 2, "most requests should take the lane"


@pytest.mark.storage_calls
async def test_a_registered_operation_by_name_answers_alike(seeded: Any) -> None:
    gateway, seed, brand = seeded
    comparison = Comparison(gateway)
    body = {"operationName": "verify_code", "variables": {"code": seed.codes[0]}}
    for key in (brand.key, None):
        assert await comparison.agree(body, key)
    assert comparison.compared == 2
    assert comparison.laned == 2


async def test_what_the_lane_declines_is_answered_once_by_the_full_path(seeded: Any) -> None:
    gateway, seed, _ = seeded
    comparison = Comparison(gateway)
    viewer = {"query": "{ viewer { role } }", "variables": {}}
    await comparison.send(viewer, None, lane=False)
    over_cost = {"query": REFUSALS[0], "variables": {"b": seed.brand_ids[0]}}
    unknown_name = {"query": REFUSALS[1], "operationName": "C", "variables": {}}
    apq = {**viewer, "extensions": {"persistedQuery": {"version": 1, "sha256Hash": "0" * 64}}}
    declined = comparison.lane.declined
    answered = comparison.lane.answered
    for body in (over_cost, unknown_name, apq):
        exchange = await comparison.send(body, None, lane=True)
        assert exchange.status in (200, 400)
        assert '"errors"' in exchange.body
    traced = await comparison.send(
        viewer, gateway.admin_key, lane=True, **{"X-Proofgate-Trace": "1"}
    )
    assert '"trace"' in traced.body
    assert comparison.lane.answered == answered
    assert comparison.lane.declined == declined + 4
    await comparison.send(viewer, None, lane=True)
    assert comparison.lane.answered == answered + 1, "the positive control: this one takes it"


@pytest.mark.parametrize("plant", ["errors unmapped", "operation unrecorded"])
async def test_a_broken_lane_is_caught(
    seeded: Any, monkeypatch: pytest.MonkeyPatch, plant: str
) -> None:
    if plant == "errors unmapped":
        monkeypatch.setattr(api.graphql.prepared, "map_errors", lambda errors, request_id: errors)
    else:
        monkeypatch.setattr(api.graphql.prepared, "record_operation", lambda *arguments: None)
    comparison = await _corpus(*seeded, until_mismatch=True)
    assert comparison.mismatches


@pytest.fixture
def unprepared(seeded: Any) -> Iterator[Any]:
    """The lane's preparations forgotten before and after the test, so what a
    planted fault prepares is prepared under it, and is not kept for others."""
    documents = seeded[0].app.state.graphql.prepared_lane.documents

    def forget() -> None:
        for entry in [*documents._entries.values(), *documents._pinned.values()]:
            entry.prepared.clear()

    forget()
    yield seeded
    forget()


def _first_variables_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    build = OperationStart._build

    def built_once(self: OperationStart, variables: Any) -> Any:
        template = build(self, variables)
        self._variables = False
        return template

    monkeypatch.setattr(OperationStart, "_build", built_once)


def _errors_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    shared = api.graphql.execution.executor.CollectedErrors()
    monkeypatch.setattr(api.graphql.execution.executor, "CollectedErrors", lambda: shared)


def _admitted_once(monkeypatch: pytest.MonkeyPatch) -> None:
    prepare = PreparedLane._prepare

    def admitted(self: PreparedLane, document: Any, name: str | None) -> Any:
        prepared: PreparedOperation | str = prepare(self, document, name)
        if isinstance(prepared, str):
            return prepared
        return replace(prepared, admitted=True)

    monkeypatch.setattr(PreparedLane, "_prepare", admitted)


def _names_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    prepare = PreparedLane._prepare
    first: dict[int, Any] = {}

    def by_document(self: PreparedLane, document: Any, name: str | None) -> Any:
        """The first named operation's preparation, for every name."""
        prepared = prepare(self, document, name)
        if name is None:
            return prepared
        kept = (document, prepared)  # the document kept: its id stays its own
        return first.setdefault(id(document), kept)[1]

    monkeypatch.setattr(PreparedLane, "_prepare", by_document)


@pytest.mark.parametrize(
    "plant", [_first_variables_kept, _errors_shared, _admitted_once, _names_ignored]
)
async def test_a_fault_planted_in_what_the_lane_keeps_is_caught(
    unprepared: Any, monkeypatch: pytest.MonkeyPatch, plant: Any
) -> None:
    """Per document, once: the operation's start (variables coerced and
    errors collected per request), its cost admission, its name."""
    plant(monkeypatch)
    comparison = await _corpus(*unprepared, until_mismatch=True)
    assert comparison.mismatches


@generated_settings(GENERATED_QUERIES // QUERIES_PER_EXAMPLE)
@given(data=st.data())
async def test_generated_queries_answer_alike(seeded: Any, data: st.DataObject) -> None:
    gateway, seed, brand = seeded
    comparison = Comparison(gateway)
    generated = generated_queries(seed, _schema(gateway))
    batch = st.lists(generated, min_size=QUERIES_PER_EXAMPLE, max_size=QUERIES_PER_EXAMPLE)
    key = data.draw(st.sampled_from([gateway.admin_key, brand.key, None]), label="who")
    for query in data.draw(batch, label="queries"):
        agreed = await comparison.agree({"query": query, "variables": {}}, key)
        assert agreed, (query, comparison.difference)


def test_graphql_core_execution_turns_the_lane_off() -> None:
    """``PROOFGATE_EXECUTION=graphql-core`` is the operator's way back to
    Strawberry's stock path, lane included."""
    for execution, built in ((Execution.COMPILED, True), (Execution.GRAPHQL_CORE, False)):
        limits = Limits(execution=execution)
        lane = prepared_lane(build_schema(limits), limits, None, TrustedDocuments.OFF)
        assert (lane is not None) is built


def test_the_strawberry_pin_spans_more_than_one_minor_release() -> None:
    """Strawberry's private names are reached through one module
    (``api/_strawberry.py``, held by ``tests/test_library_doors.py``), so the
    pin (pyproject.toml) may span several minor releases."""
    pin = re.search(r'"strawberry-graphql>=0\.(\d+)[^,]*,<0\.(\d+)"', PYPROJECT.read_text())
    assert pin is not None
    assert int(pin[2]) - int(pin[1]) > 1, "the pin spans more than one minor release"
