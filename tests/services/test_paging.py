"""query_all reads a partition to its end, page after page, or stops at a limit."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from services.paging import query_all
from storage import Put, Storage
from storage.access_patterns import PROVENANCE_CHAIN
from storage.keys import encode_int
from storage.sqlite import open_sqlite
from storage.trace import Trace, tracing

EVENTS = 2 * PROVENANCE_CHAIN.max_page + 1
PARAMS = {"product_id": "P1"}


@pytest.fixture(scope="module")
async def storage() -> AsyncIterator[Storage]:
    storage = await open_sqlite(":memory:", cursor_key=bytes(range(32)))
    pk = PROVENANCE_CHAIN.partition(PARAMS)
    events = [Put({"PK": pk, "SK": f"EVENT#{encode_int(n)}", "n": n}) for n in range(EVENTS)]
    for start in range(0, EVENTS, 25):
        await storage.transact_write(events[start : start + 25])
    yield storage
    await storage.close()


def queries(trace: Trace) -> int:
    return sum(call.operation == "Query" for call in trace.calls)


async def test_every_item_in_order_in_pages_as_large_as_allowed(storage: Storage) -> None:
    with tracing() as trace:
        items = await query_all(storage, PROVENANCE_CHAIN, PARAMS, tenant="t")
    assert [item["n"] for item in items] == list(range(EVENTS))
    assert queries(trace) == 3


@pytest.mark.parametrize(("limit", "pages"), [(1, 1), (100, 1), (101, 2), (10_000, 3)])
async def test_a_limit_stops_at_the_page_that_reaches_it(
    storage: Storage, limit: int, pages: int
) -> None:
    with tracing() as trace:
        items = await query_all(storage, PROVENANCE_CHAIN, PARAMS, tenant="t", limit=limit)
    assert [item["n"] for item in items] == list(range(min(limit, EVENTS)))
    assert queries(trace) == pages


async def test_an_empty_partition_is_one_query(storage: Storage) -> None:
    with tracing() as trace:
        assert await query_all(storage, PROVENANCE_CHAIN, {"product_id": "none"}, tenant="t") == []
    assert queries(trace) == 1
