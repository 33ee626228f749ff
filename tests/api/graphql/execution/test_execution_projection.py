"""A stored page's edges written from its items answer exactly what the
general path answers (docs/design.md, Projected pages).

Generated selections of a brand's product page, over products whose stored
values the projection writes (plain ASCII, missing optional attributes, each
status) and products whose values it must leave to the general path (a
quote, a backslash, non-ASCII, a control character), run through compiled
plans and through graphql-core on both backends; the responses must be
equal and the projection must have answered the plain pages. The response
budget must run out at the same byte on both, and two faults planted in the
projection must be caught.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import pytest
from _differential import Differential, generated_settings
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import api.graphql.execution.projection as projection
import api.graphql.execution.resolve as resolve
from api.observability import fallbacks
from services.auth import ANONYMOUS, Principal, Role, authenticate

pytestmark = pytest.mark.fast_paths

ADMIN = Principal(Role.ADMIN)
PAGE = """query($b: ID!) { brand(id: $b) { name products(first: 3) {
  edges { cursor node { id name sku status brand { name } certificate { hash } } }
  pageInfo { hasNextPage }
} } }"""
LAST_IN_EDGES = PAGE.replace("pageInfo { hasNextPage }", "")
"""The page with its last byte in the edges, so one byte short ends inside them."""
ODD = (
    {"name": 'Say "hi"'},
    {"name": "back\\slash"},
    {"name": "naïve"},
    {"description": "two\nlines"},
)
GENERATED = {"sqlite": 150, "dynamodb": 30}
"""Selections per backend: moto answers over HTTP, so fewer there."""

_LEAVES = ["id", "name", "sku", "category", "description", "status", "__typename"]
_UNDECLARED = ["metadata", "createdAt", "verificationCode", "scanCount"]
_BRAND = ["id", "name", "domain", "industry", "__typename", "createdAt"]
_CERTIFICATE = ["hash", "signature", "keyId", "algorithm", "chainHead", "__typename"]


@pytest.fixture(scope="module", params=["sqlite", "dynamodb"])
def served(request: pytest.FixtureRequest) -> Any:
    return request.getfixturevalue(f"{request.param}_gateway")


@pytest.fixture(scope="module")
async def seeded(served: Any) -> AsyncIterator[dict[str, Any]]:
    gateway = served
    plain = await gateway.register_brand("Plain", plan="PRO", credits=20)
    odd = await gateway.register_brand("Odd", plan="PRO", credits=20)
    for index in range(4):
        fields = {"sku": f"SKU-{index}"} if index % 2 else {"description": "plain words"}
        await gateway.register_product(plain, **fields)
    for fields in ODD:
        await gateway.register_product(odd, **fields)
    product = await gateway.register_product(plain, category="tools")
    await gateway.data(
        'mutation($p: ID!) { recallProduct(productId: $p, reason: "test") { id } }',
        {"p": product["id"]},
        key=plain.key,
    )
    services = gateway.app.state.graphql.services
    owner = await authenticate(services.storage, f"Bearer {plain.key}", services.admin_key_hash)
    yield {
        "backend": gateway.backend,
        "differential": Differential(services),
        "brands": [plain.id, odd.id],
        "owner": owner,
    }


def _fields(
    pool: list[str], nested: dict[str, st.SearchStrategy[str]], alias: bool = True, most: int = 4
) -> st.SearchStrategy[str]:
    """``alias`` False: the differential opens cursors by their field name."""
    leaf = st.sampled_from(pool)
    # An alias names one field only: two fields under one alias would not validate.
    aliased = st.tuples(st.sampled_from(["a", "b"]), leaf).map(lambda p: f"{p[0]}_{p[1]}: {p[1]}")
    choices = [leaf, *([aliased] if alias else []), *nested.values()]
    return st.lists(st.one_of(*choices), min_size=1, max_size=most).map(" ".join)


def _selections(undeclared: bool = True) -> st.SearchStrategy[str]:
    """With ``undeclared`` False, only fields the projection covers."""
    brand = _fields(_BRAND[:-1], {}).map(lambda s: f"brand {{ {s} }}")
    certificate = _fields(_CERTIFICATE, {}).map(lambda s: f"certificate {{ {s} }}")
    nested = {"brand": brand, "certificate": certificate}
    if undeclared:
        nested["brand"] = _fields(_BRAND, {}).map(lambda s: f"brand {{ {s} }}")
        nested["odd"] = st.sampled_from(_UNDECLARED)
    node = _fields(_LEAVES, nested)
    fragment = node.map(lambda s: f"... on Product {{ {s} }}")
    node_selection = st.one_of(node, fragment).map(lambda s: f"node {{ {s} }}")
    edge = _fields(["cursor", "__typename"], {"node": node_selection}, alias=False, most=3)
    page_info = st.sampled_from(["pageInfo { hasNextPage }", "pageInfo { endCursor }", ""])
    first = st.integers(1, 6)
    return st.tuples(edge, page_info, first).map(
        lambda p: (
            f"query($b: ID!) {{ brand(id: $b) {{ name products(first: {p[2]}) "
            f"{{ edges {{ {p[0]} }} {p[1]} }} }} }}"
        )
    )


@settings(generated_settings(30), phases=[Phase.explicit, Phase.generate])
@given(data=st.data())
async def test_generated_page_selections_answer_alike(
    seeded: dict[str, Any], data: st.DataObject
) -> None:
    """Each example's first selection names only covered fields of the
    plain brand's page, which the projection must then have written."""
    differential: Differential = seeded["differential"]
    covered = data.draw(_selections(undeclared=False), label="covered")
    before = _counted("projected")
    agreed, mode = await differential.agree(covered, {"b": seeded["brands"][0]}, ADMIN)
    assert (agreed, mode) == (True, "compiled"), covered
    assert _counted("projected") > before, covered
    for _ in range(GENERATED[seeded["backend"]] // 30 - 1):
        query = data.draw(_selections(), label="query")
        brand = data.draw(st.sampled_from(seeded["brands"]), label="brand")
        who = data.draw(st.sampled_from([ADMIN, seeded["owner"], ANONYMOUS]), label="who")
        agreed, mode = await differential.agree(query, {"b": brand}, who)
        assert (agreed, mode) == (True, "compiled"), query


async def test_plain_pages_are_projected_and_odd_ones_are_not(seeded: dict[str, Any]) -> None:
    differential: Differential = seeded["differential"]
    plain, odd = seeded["brands"]
    for brand, counted in ((plain, "projected"), (odd, "abandoned")):
        before = _counted(counted)
        agreed, mode = await differential.agree(PAGE, {"b": brand}, ADMIN)
        assert (agreed, mode) == (True, "compiled")
        assert _counted(counted) == before + 1, counted


async def test_the_budget_runs_out_at_the_same_byte(
    seeded: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    differential: Differential = seeded["differential"]
    variables = {"b": seeded["brands"][0]}
    fits = await _smallest_budget(differential, variables, monkeypatch)
    for budget in (fits, fits - 1):
        for schema in (differential.compiled, differential.core):
            monkeypatch.setattr(schema.execution_context_class, "max_response_bytes", budget)
        counted = "projected" if budget == fits else "abandoned"
        before = _counted(counted)
        agreed, _ = await differential.agree(LAST_IN_EDGES, variables, ADMIN)
        assert agreed, budget
        assert _counted(counted) == before + 1, budget


def _counted(what: str) -> int:
    """Pages the projection wrote, or left to the general path (by any cause)."""
    if what == "projected":
        return fallbacks.taken().get("projection", 0)
    counts = fallbacks.counts()
    return sum(n for (lane, _), n in counts.items() if lane == "projection")


async def _smallest_budget(
    differential: Differential, variables: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> int:
    """The least budget under which graphql-core answers the page."""
    low, high = 1, 100_000
    while low < high:
        middle = (low + high) // 2
        monkeypatch.setattr(differential.core.execution_context_class, "max_response_bytes", middle)
        text, _ = await differential.run(differential.core, LAST_IN_EDGES, variables, ADMIN)
        low, high = (low, middle) if '"data": {' in text else (middle + 1, high)
    return low


async def test_a_wrong_enum_name_is_caught(
    seeded: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Planted fault: the projection names each status by the next member's name."""
    real = projection.enum_names

    def shifted(enum: Any) -> dict[Any, str] | None:
        names = real(enum)
        if names is None:
            return None
        values = list(names.values())
        return dict(zip(names, values[1:] + values[:1], strict=True))

    monkeypatch.setattr(projection, "enum_names", shifted)
    differential = Differential(seeded["differential"].services)
    agreed, mode = await differential.agree(PAGE, {"b": seeded["brands"][0]}, ADMIN)
    assert (agreed, mode) == (False, "compiled")


async def test_an_undercounted_key_is_caught(
    seeded: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Planted fault: the projection counts each key a byte short, so one
    byte under the budget it still answers where the general path refuses."""
    monkeypatch.setattr(projection, "key_bytes", lambda name: len(name.encode()) + 3)
    differential = Differential(seeded["differential"].services)
    variables = {"b": seeded["brands"][0]}
    fits = await _smallest_budget(differential, variables, monkeypatch)
    for schema in (differential.compiled, differential.core):
        monkeypatch.setattr(schema.execution_context_class, "max_response_bytes", fits - 1)
    agreed, mode = await differential.agree(LAST_IN_EDGES, variables, ADMIN)
    assert (agreed, mode) == (False, "compiled")


async def test_a_resolver_given_the_wrong_argument_is_caught(
    seeded: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Planted fault in the direct call of a resolver with plain scalar
    arguments (the page's ``products(first:)``): each argument goes to the
    next one's Python name."""
    real = resolve._plain_arguments

    def shifted(field: Any, config: Any) -> tuple[resolve.Argument, ...] | None:
        arguments = real(field, config)
        if not arguments or len(arguments) < 2:
            return arguments
        pythons = [argument.python_name for argument in arguments]
        return tuple(
            dataclasses.replace(argument, python_name=python)
            for argument, python in zip(arguments, pythons[1:] + pythons[:1], strict=True)
        )

    query = "query($b: ID!) { brand(id: $b) { products(first: 1) { edges { node { id } } } } }"
    variables = {"b": seeded["brands"][0]}
    assert await seeded["differential"].agree(query, variables, ADMIN) == (True, "compiled")
    monkeypatch.setattr(resolve, "_plain_arguments", shifted)
    differential = Differential(seeded["differential"].services)
    assert await differential.agree(query, variables, ADMIN) == (False, "compiled")
