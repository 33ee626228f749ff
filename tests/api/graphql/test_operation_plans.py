"""Registered operations are prepared once, at start-up: parsed and pinned
in the document cache, compiled and pinned in the plan cache; a call by
name, hash or text compiles nothing, and client documents cannot evict them."""

from __future__ import annotations

import hashlib

import pytest
from _limits import ADMIN_KEY, serve

from api.operations.defaults import default_documents
from api.settings.limits import Limits

pytestmark = pytest.mark.fast_paths

UNREGISTERED = "query Other{n} {{ explore(first: 1) {{ edges {{ node {{ id }} }} }} }}"


def plans_of(app):  # type: ignore[no-untyped-def]
    return app.state.graphql.schema.execution_context_class.plans


async def test_every_query_and_mutation_is_compiled_at_start_up() -> None:
    async with serve() as gateway:
        plans = plans_of(gateway.app)
        registry = gateway.app.state.operations
        runnable = [op for op in registry.by_name.values() if op.kind != "subscription"]
        assert plans.stats.compilations == len(runnable) > 0
        # The explorer's Node tab selects an interface (node(id:)), left to graphql-core.
        abstract = [op.name for op in runnable if "node(id:" in op.text]
        assert abstract == ["Node"]
        assert plans.stats.fallbacks == len(abstract)
        assert len(gateway.app.state.graphql.schema.document_cache) == len(default_documents())


async def test_a_registered_call_compiles_nothing_even_after_evictions() -> None:
    """A document budget that holds no client document; the positive control
    is that client documents do compile, each in turn."""
    async with serve(Limits(document_cache_bytes=1)) as gateway:
        plans = plans_of(gateway.app)
        prepared = plans.stats.compilations
        for n in range(3):
            body = await gateway.execute(UNREGISTERED.format(n=n), key=ADMIN_KEY)
            assert "errors" not in body
        assert plans.stats.compilations == prepared + 3
        verify = gateway.app.state.operations.by_name["Verify"]
        by_name = await gateway.http.post(
            "/graphql",
            json={"operationName": "Verify", "variables": {"code": "nope"}},
            headers={"Authorization": f"Bearer {ADMIN_KEY}", "X-Proofgate-Trace": "1"},
        )
        digest = hashlib.sha256(verify.text.encode()).hexdigest()
        by_hash = await gateway.http.post(
            "/graphql",
            json={
                "variables": {"code": "nope"},
                "extensions": {"persistedQuery": {"version": 1, "sha256Hash": digest}},
            },
            headers={"Authorization": f"Bearer {ADMIN_KEY}", "X-Proofgate-Trace": "1"},
        )
        by_text = await gateway.post(verify.text, {"code": "nope"}, key=ADMIN_KEY, trace=True)
        for response in (by_name, by_hash, by_text):
            body = response.json()
            assert body["data"]["verification"]["result"] == "UNKNOWN", body
            assert body["extensions"]["trace"]["execution"] == "compiled"
        assert plans.stats.compilations == prepared + 3
