"""Compiled plans answer exactly what graphql-core answers.

Every query the suite and the explorer send, and thousands generated from the
schema by hypothesis-graphql, run both ways over one seeded store; the parsed
responses must be equal, data key order and error order included. A compiler
broken on purpose must be caught by the same comparison.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from _differential import (
    Differential,
    Seed,
    generated_queries,
    generated_settings,
    seed_variables,
    suite_operations,
)
from graphql import (
    located_error,
)
from hypothesis import given
from hypothesis import strategies as st

from api.observability import fallbacks
from services.auth import ANONYMOUS, Principal, Role, authenticate

pytestmark = pytest.mark.fast_paths

ADMIN_PRINCIPAL = Principal(Role.ADMIN)

GENERATED_QUERIES = 2000
QUERIES_PER_EXAMPLE = 10
"""Queries drawn per hypothesis example: fewer, larger examples keep the
2,000 queries within the suite's time budget."""
SEED_PRODUCTS = 6


@pytest.fixture(scope="module")
async def seeded(sqlite_gateway: Any) -> AsyncIterator[tuple[Differential, Seed, Any]]:
    gateway = sqlite_gateway
    seed = Seed()
    brand = await gateway.register_brand("Differential", plan="PRO", credits=50)
    seed.brand_ids.append(brand.id)
    for index in range(SEED_PRODUCTS):
        product = await gateway.register_product(
            brand, sku=f"SKU-{index}", metadata={"n": index, "tags": ["a", "b"]}
        )
        seed.product_ids.append(product["id"])
        seed.codes.append(product["verificationCode"])
        seed.hashes.append(product["certificate"]["hash"])
    for code in seed.codes[:3]:
        await gateway.data(
            'mutation($c: String!) { verifyProduct(code: $c, scan: {country: "FR"}) { result } }',
            {"c": code},
        )
    await gateway.data(
        'mutation($p: ID!) { recallProduct(productId: $p, reason: "test") { id } }',
        {"p": seed.product_ids[-1]},
        key=brand.key,
    )
    services = gateway.app.state.graphql.services
    brand_principal = await authenticate(
        services.storage, f"Bearer {brand.key}", services.admin_key_hash
    )
    yield Differential(services), seed, brand_principal


async def test_every_suite_and_explorer_query_answers_alike(seeded: Any) -> None:
    differential, seed, brand = seeded
    operations = list(suite_operations(differential.compiled.graphql_schema))
    assert len(operations) >= 30, "the scan of the suite's operations found too few"
    modes = []
    for text in operations:
        for principal in (ADMIN_PRINCIPAL, brand, ANONYMOUS):
            agreed, mode = await differential.agree(text, seed_variables(text, seed), principal)
            assert agreed, text
            modes.append(mode)
    assert modes.count("compiled") > len(modes) // 2, "most operations should compile"


@pytest.mark.parametrize("execution", ["compiled,-fused", "compiled,-projection"])
async def test_a_plan_without_one_of_its_lanes_answers_alike(seeded: Any, execution: str) -> None:
    """``fused`` and ``projection`` taken off one at a time: the closures and
    the general path they mirror answer what graphql-core answers."""
    differential, seed, brand = seeded
    without = Differential(differential.services, execution)
    projected = fallbacks.taken().get("projection", 0)
    for text in suite_operations(without.compiled._schema):
        for principal in (ADMIN_PRINCIPAL, brand, ANONYMOUS):
            agreed, _ = await without.agree(text, seed_variables(text, seed), principal)
            assert agreed, (execution, text)
    written = fallbacks.taken().get("projection", 0) - projected
    assert (written == 0) is execution.endswith("-projection"), "the lane is off, and only it"


@generated_settings(GENERATED_QUERIES // QUERIES_PER_EXAMPLE)
@given(data=st.data())
async def test_generated_queries_answer_alike(seeded: Any, data: st.DataObject) -> None:
    differential, seed, brand = seeded
    batch = st.lists(
        generated_queries(seed, differential.compiled.graphql_schema),
        min_size=QUERIES_PER_EXAMPLE,
        max_size=QUERIES_PER_EXAMPLE,
    )
    principal = data.draw(st.sampled_from([ADMIN_PRINCIPAL, brand, ANONYMOUS]), label="who")
    for query in data.draw(batch, label="queries"):
        agreed, mode = await differential.agree(query, None, principal)
        assert agreed, query
        # None: refused before execution (a limit), so neither executor ran.
        assert mode in ("compiled", None), "a generated query fell back to graphql-core"


async def test_a_compiler_bug_is_caught(seeded: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutation check: with null propagation broken in the compiled path (a
    non-null field's error stops at the field), the comparison disagrees."""
    differential, _, _ = seeded
    executor = differential.compiled.execution_context_class
    query = '{ health { status } product(id: "missing") { id name } }'
    agreed, mode = await differential.agree(query, None, ANONYMOUS)
    assert (agreed, mode) == (True, "compiled")

    def swallow(self: Any, raw_error: Exception, return_type: Any, details: Any, path: Any) -> None:
        self.collected_errors.add(located_error(raw_error, [d.node for d in details]), path)

    monkeypatch.setattr(executor, "handle_field_error", swallow)
    agreed, mode = await differential.agree(query, None, ANONYMOUS)
    assert (agreed, mode) == (False, "compiled")
