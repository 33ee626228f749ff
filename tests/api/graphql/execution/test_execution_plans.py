"""Plan cache bounds, the fallback to graphql-core, and the setting."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from _operation_context import Context
from graphql import parse

from api.graphql.execution import PlanCache
from api.graphql.execution.cache import PLAN_BYTES_BASE, PLAN_BYTES_PER_FIELD, PLAN_VARIANTS
from api.graphql.execution.plan import OperationPlan
from api.settings.gateway import Settings
from api.settings.limits import PRESETS, Execution, Lane, Limits
from domain.errors import ConfigurationError

pytestmark = pytest.mark.fast_paths

TRACED = "{ health { status } }"


def _operation(text: str) -> Any:
    return parse(text).definitions[0]


def _plan(fields: int) -> OperationPlan:
    return OperationPlan(run=lambda executor, root: {}, fields=fields)


def test_the_cache_keeps_at_most_its_entries() -> None:
    cache = PlanCache(max_items=2)
    operations = [_operation("{ a }"), _operation("{ b }"), _operation("{ c }")]
    for operation in operations:
        cache.store(cache.entry(operation, []), (), _plan(1))
    assert len(cache) == 2
    assert cache.entry(operations[2], []).plans, "the newest entry was kept"
    assert not cache.entry(operations[0], []).plans, "the oldest entry was evicted"


def test_the_cache_keeps_at_most_its_bytes() -> None:
    text = sys.getsizeof("{ f0 }")
    budget = 3 * (PLAN_BYTES_BASE + text + 10 * PLAN_BYTES_PER_FIELD)
    cache = PlanCache(max_items=100, max_bytes=budget)
    for index in range(10):
        cache.store(cache.entry(_operation(f"{{ f{index} }}"), []), (), _plan(10))
        assert cache.bytes <= budget
    assert len(cache) == 3


def test_skip_and_include_values_get_their_own_plans_up_to_a_bound() -> None:
    cache = PlanCache()
    operation = _operation("query($a: Boolean!) { x @skip(if: $a) y }")
    entry = cache.entry(operation, [])
    assert entry.conditions == ("a",)
    for index in range(PLAN_VARIANTS + 1):
        cache.store(entry, (index,), _plan(1))
    assert len(entry.plans) <= PLAN_VARIANTS
    assert cache.bytes == entry.size


async def test_the_trace_says_which_executor_ran(sqlite_gateway: Any) -> None:
    key = sqlite_gateway.admin_key  # the trace answers callers with a key
    body = await sqlite_gateway.execute(TRACED, trace=True, key=key)
    assert body["extensions"]["trace"]["execution"] == "compiled"
    introspection = await sqlite_gateway.execute(
        "{ __schema { queryType { name } } }", trace=True, key=key
    )
    assert introspection["data"] == {"__schema": {"queryType": {"name": "Query"}}}
    assert introspection["extensions"]["trace"]["execution"] == "graphql-core"


def test_the_setting_chooses_the_executor(tmp_path: Path) -> None:
    def limits(**environ: str) -> Limits:
        return Settings.from_env({"PROOFGATE_DATA_DIR": str(tmp_path), **environ}).limits

    assert limits().execution == PRESETS[Execution.COMPILED] == frozenset(Lane)
    assert limits(PROOFGATE_EXECUTION="graphql-core").execution == {
        Lane.ENTRY,
        Lane.PROTOCOL,
        Lane.KEEPALIVE,
    }
    assert limits(PROOFGATE_EXECUTION="library").execution == frozenset()
    assert limits(PROOFGATE_EXECUTION="Compiled, -fused").execution == frozenset(Lane) - {
        Lane.FUSED
    }
    assert limits(PROOFGATE_EXECUTION="library,plan,projection").execution == {
        Lane.PLAN,
        Lane.PROJECTION,
    }
    with pytest.raises(ConfigurationError, match="PROOFGATE_EXECUTION"):
        limits(PROOFGATE_EXECUTION="jit")


async def test_graphql_core_mode_reports_itself() -> None:
    from api.graphql.schema import build_schema

    schema = build_schema(Limits(execution=Execution.GRAPHQL_CORE))

    context = Context()
    result = await schema.execute("{ __typename }", context_value=context)
    assert result.data == {"__typename": "Query"}
    assert context.execution == "graphql-core"


def test_an_entry_is_charged_the_text_its_document_keeps_alive() -> None:
    """Every node's location points at the document's text, so a plan of a
    1 MB query (a long comment) holds 1 MB, however few fields it has."""
    megabyte = 1024 * 1024
    cache = PlanCache(max_items=100, max_bytes=4 * megabyte)
    for index in range(10):
        operation = _operation(f"{{ f{index} }}\n#" + "x" * megabyte)
        cache.store(cache.entry(operation, []), (), _plan(1))
        assert cache.bytes <= 4 * megabyte
    assert len(cache) == 3
    assert cache.bytes >= 3 * megabyte
