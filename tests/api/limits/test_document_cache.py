"""The document cache holds parsed and validated documents within a byte
budget, whatever the clients send."""

from __future__ import annotations

import gc
import sys
import tracemalloc

import pytest
from graphql import parse

from api.graphql.schema import build_schema
from api.limits.document_cache import DocumentCache, document_weight
from api.settings.limits import Limits

MIB = 1024 * 1024
SHAPES = {
    "one long comment": "#" + "x" * MIB + "\n{ health { status } }",
    "non-ASCII comment": "#" + "é" * (MIB // 2) + "\n{ health { status } }",
    "many tokens": "{" + " ".join(f"a{i}: health {{ status }}" for i in range(280)) + "}",
    "many comments": "\n".join("#" + "y" * 500 for _ in range(1990)) + "\n{ health { status } }",
    "long string argument": '{ product(id: "' + "x" * MIB + '") { id } }',
    "small": "{ health { status } }",
}


def retained_by_parse(query: str) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        document = parse(query, max_tokens=2000)
        gc.collect()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    assert document is not None
    return sum(stat.size_diff for stat in after.compare_to(before, "filename"))


@pytest.mark.parametrize("shape", list(SHAPES))
def test_the_weight_never_undercounts_what_parsing_keeps(shape: str) -> None:
    """Differential against tracemalloc: the key (the text) plus what parse allocated."""
    query = SHAPES[shape]
    measured = sys.getsizeof(query) + retained_by_parse(query)

    weight = document_weight(query, parse(query, max_tokens=2000))

    assert measured <= weight <= 3 * measured + 8192


def distinct_megabyte_queries(count: int) -> list[str]:
    return [f"# {n:04}" + "x" * (MIB - 64) + "\n{ __typename }" for n in range(count)]


def test_distinct_megabyte_queries_stay_within_the_budget() -> None:
    cache = DocumentCache(16 * MIB)
    for query in distinct_megabyte_queries(12):
        cache.parse(query, 2000)
        assert cache.bytes <= cache.max_bytes

    assert 0 < len(cache) <= 8
    assert cache.bytes == sum(e.weight for e in cache._entries.values())


def test_recently_used_documents_stay_and_the_oldest_go() -> None:
    """Same-sized documents, a budget for four of them."""
    small = [f"{{ a{n}: health {{ status }} }}" for n in range(5)]
    weight = document_weight(small[0], parse(small[0]))
    cache = DocumentCache(4 * weight + weight // 2)
    first = cache.parse(small[0], 2000)
    for query in small[1:4]:
        cache.parse(query, 2000)
    assert cache.parse(small[0], 2000) is first

    cache.parse(small[4], 2000)

    assert [query for query, _ in cache._entries] == [small[2], small[3], small[0], small[4]]
    assert cache.parse(small[0], 2000) is first
    assert cache.bytes <= cache.max_bytes


def test_a_document_over_a_quarter_of_the_budget_is_not_kept() -> None:
    cache = DocumentCache(4 * MIB)
    cache.parse(SHAPES["one long comment"], 2000)
    assert len(cache) == 0 and cache.bytes == 0


def test_validation_is_remembered_while_the_document_is_cached() -> None:
    cache = DocumentCache(MIB)
    runs: list[int] = []

    def validate() -> list[object]:
        runs.append(1)
        return []

    document = cache.parse("{ health { status } }", 2000)
    cache.validate(document, "rules", validate)  # type: ignore[arg-type]
    cache.validate(document, "rules", validate)  # type: ignore[arg-type]
    cache.validate(document, "other rules", validate)  # type: ignore[arg-type]
    uncached = parse("{ health { status } }")
    cache.validate(uncached, "rules", validate)  # type: ignore[arg-type]

    assert len(runs) == 3


def test_preparations_are_kept_per_operation_name_charged_and_evicted_with_the_document() -> None:
    """What the prepared lane keeps: once per name the document holds (a name
    it does not hold is never kept, so clients cannot grow an entry), counted
    against the budget, gone when the document is."""
    cache = DocumentCache(256 * 1024)
    text = "query A { health { status } } query B { viewer { role } }"
    cache.validate(cache.parse(text, 2000), "rules", list)
    made: list[str | None] = []

    def prepare(document: object, name: str | None) -> str:
        made.append(name)
        return f"prepared {name}"

    assert cache.prepared("{ health { status } }", 2000, None, prepare) is None, "not cached"
    before = cache.bytes
    for name in ("A", "B", "A", "C", "C", None, None):
        assert cache.prepared(text, 2000, name, prepare) == f"prepared {name}"
    assert made == ["A", "B", "C", "C", None], "kept for A, B and None; never for C"
    assert cache.bytes == before + 3 * 4096
    for index in range(cache.max_bytes // 4096):  # each weighs more: the oldest goes
        cache.parse(f"{{ health {{ status }} }} # {index}", 2000)
    assert cache.prepared(text, 2000, "A", prepare) is None, "evicted with its document"
    assert cache.bytes <= cache.max_bytes


@pytest.mark.slow
async def test_the_schema_holds_no_more_than_its_budget_after_distinct_queries() -> None:
    """End to end through the schema's extensions: 100 distinct 1 MB queries."""
    budget = 16 * MIB
    schema = build_schema(Limits(document_cache_bytes=budget))
    cache = schema.document_cache
    assert cache is not None
    for query in distinct_megabyte_queries(100):
        result = await schema.execute(query)
        assert result.errors is None and result.data == {"__typename": "Query"}
        assert cache.bytes <= budget

    assert 4 <= len(cache) <= 8


def test_a_document_is_freed_without_waiting_for_the_garbage_collector() -> None:
    """Its tokens no longer form a cycle, so the text they copied goes with
    the last reference, not at the next full collection."""
    cache = DocumentCache(0)
    gc.collect()
    gc.disable()
    try:
        document = cache.parse("# a comment\n{ health { status } }", 2000)
        del document
        unreachable = gc.collect()
    finally:
        gc.enable()
    assert unreachable == 0
