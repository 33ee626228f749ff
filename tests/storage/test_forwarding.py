"""``Forwarding``: every call reaches ``inner`` as it is at the call."""

from __future__ import annotations

from storage import Forwarding, Put, Storage
from storage.access_patterns import PROVENANCE_CHAIN
from storage.sqlite import open_sqlite

KEY = bytes(range(32))


def event(sequence: int) -> Put:
    return Put({"PK": "PRODUCT#f", "SK": f"EVENT#{sequence:020d}", "sequence": sequence})


async def chain(storage: Storage) -> list[int]:
    page = await storage.query(PROVENANCE_CHAIN, {"product_id": "f"}, tenant="t")
    return [item["sequence"] for item in page.items]


async def test_reads_and_writes_follow_inner_when_it_is_swapped() -> None:
    first = await open_sqlite(":memory:", cursor_key=KEY)
    second = await open_sqlite(":memory:", cursor_key=KEY)
    forwarding = Forwarding(first)
    try:
        await forwarding.transact_write([event(1)])
        assert await chain(forwarding) == await chain(first) == [1]
        forwarding.inner = second
        await forwarding.transact_write([event(2)])
        assert await chain(forwarding) == [2] and await chain(first) == [1]
        assert forwarding.backend == first.backend
    finally:
        await first.close()
        await forwarding.close()
