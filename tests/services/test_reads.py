"""``StorageReads`` (for jobs outside a request) answers exactly as the
request-scoped DataLoaders of the GraphQL layer do, read for read."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from resolvers.loaders import Loaders
from services.context import Reads
from services.reads import StorageReads
from storage import Put, Storage
from storage.access_patterns import PRODUCT_BY_ID, PROVENANCE_CHAIN
from storage.keys import encode_int
from storage.sqlite import open_sqlite

PRODUCTS = ["P1", "P2", "P3"]
EVENTS = PROVENANCE_CHAIN.max_page + 5
TENANT = "t"


def _product(product_id: str) -> dict[str, Any]:
    key = PRODUCT_BY_ID.key(product_id=product_id)
    return {"PK": key.pk, "SK": key.sk, "id": product_id}


@pytest.fixture(scope="module")
async def storage() -> AsyncIterator[Storage]:
    storage = await open_sqlite(":memory:", cursor_key=bytes(range(32)))
    products = [Put(_product(p)) for p in PRODUCTS]
    pk = PROVENANCE_CHAIN.partition({"product_id": "P1"})
    events = [Put({"PK": pk, "SK": f"EVENT#{encode_int(n)}", "n": n}) for n in range(EVENTS)]
    for start in range(0, len(events), 25):
        await storage.transact_write(events[start : start + 25])
    await storage.transact_write(products)
    yield storage
    await storage.close()


async def _answers(reads: Reads) -> list[Any]:
    item = await reads.item(PRODUCT_BY_ID, product_id="P2")
    missing = await reads.item(PRODUCT_BY_ID, product_id="nope")
    items = await reads.items(PRODUCT_BY_ID, [{"product_id": p} for p in ["P3", "nope", "P1"]])
    first = await reads.page(PROVENANCE_CHAIN, {"product_id": "P1"}, first=7)
    rest = await reads.page(
        PROVENANCE_CHAIN, {"product_id": "P1"}, after=first.cursor(len(first.items) - 1)
    )
    return [
        item,
        missing,
        items,
        [event["n"] for event in first.items],
        first.has_next_page,
        [event["n"] for event in rest.items],
        rest.has_next_page,
    ]


async def test_storage_reads_answer_as_the_dataloaders_do(storage: Storage) -> None:
    expected = await _answers(Loaders(storage, TENANT))
    assert expected[0] is not None and expected[0]["id"] == "P2", "the fixture is readable"
    assert await _answers(StorageReads(storage, TENANT)) == expected


async def test_storage_reads_never_serve_a_stale_item(storage: Storage) -> None:
    reads = StorageReads(storage, TENANT)
    before = await reads.item(PRODUCT_BY_ID, product_id="P1")
    await storage.transact_write([Put({**_product("P1"), "name": "renamed"})])
    after = await reads.item(PRODUCT_BY_ID, product_id="P1")
    assert before is not None and "name" not in before
    assert after is not None and after["name"] == "renamed"
