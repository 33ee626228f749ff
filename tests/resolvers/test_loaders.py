"""What a request already holds is read from nothing; what it forgets is read again."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from resolvers.loaders import Loaders
from storage import Put, Storage
from storage.access_patterns import PRODUCT_BY_ID
from storage.sqlite import open_sqlite
from storage.trace import tracing

TENANT = "t"


def _product(product_id: str, name: str) -> dict[str, Any]:
    key = PRODUCT_BY_ID.key(product_id=product_id)
    return {"PK": key.pk, "SK": key.sk, "id": product_id, "name": name}


@pytest.fixture
async def storage() -> AsyncIterator[Storage]:
    storage = await open_sqlite(":memory:", cursor_key=bytes(range(32)))
    await storage.transact_write([Put(_product(p, f"stored {p}")) for p in ("P1", "P2")])
    yield storage
    await storage.close()


async def test_a_held_item_is_answered_without_a_read(storage: Storage) -> None:
    loaders = Loaders(storage, TENANT)
    held = _product("P1", "held")
    loaders.prime(PRODUCT_BY_ID, held, product_id="P1")
    with tracing() as trace:
        assert await loaders.item(PRODUCT_BY_ID, product_id="P1") is held
        assert loaders.cached(PRODUCT_BY_ID, product_id="P1") == (True, held)
        items = await loaders.items(PRODUCT_BY_ID, [{"product_id": "P2"}, {"product_id": "P1"}])
    assert [item["name"] if item else None for item in items] == ["stored P2", "held"]
    assert trace.storage_calls == 1  # P2 alone; a positive control that reads are seen


async def test_priming_replaces_an_item_already_read(storage: Storage) -> None:
    loaders = Loaders(storage, TENANT)
    assert (await loaders.item(PRODUCT_BY_ID, product_id="P1"))["name"] == "stored P1"  # type: ignore[index]
    written = _product("P1", "written")
    loaders.prime(PRODUCT_BY_ID, written, product_id="P1")
    assert await loaders.item(PRODUCT_BY_ID, product_id="P1") is written


async def test_a_held_page_answers_each_item_as_priming_it_would(storage: Storage) -> None:
    loaders = Loaders(storage, TENANT)
    assert (await loaders.item(PRODUCT_BY_ID, product_id="P1"))["name"] == "stored P1"  # type: ignore[index]
    page = [_product("P1", "paged"), _product("P2", "paged")]
    loaders.hold_page(PRODUCT_BY_ID, page, param="product_id", attribute="id")
    with tracing() as trace:
        assert await loaders.item(PRODUCT_BY_ID, product_id="P1") is page[0]
        assert loaders.cached(PRODUCT_BY_ID, product_id="P2") == (True, page[1])
        assert await loaders.item(PRODUCT_BY_ID, product_id="P3") is None
    assert trace.storage_calls == 1  # P3 alone


async def test_a_forgotten_item_is_read_again(storage: Storage) -> None:
    loaders = Loaders(storage, TENANT)
    loaders.prime(PRODUCT_BY_ID, _product("P1", "held"), product_id="P1")
    loaders.forget(PRODUCT_BY_ID, product_id="P1")
    assert loaders.cached(PRODUCT_BY_ID, product_id="P1") == (False, None)
    with tracing() as trace:
        item = await loaders.item(PRODUCT_BY_ID, product_id="P1")
    assert item is not None and item["name"] == "stored P1"
    assert trace.storage_calls == 1


async def test_built_runs_once_per_item(storage: Storage) -> None:
    loaders = Loaders(storage, TENANT)
    first, second = _product("P1", "a"), _product("P1", "a")
    calls: list[dict[str, Any]] = []

    def build(item: dict[str, Any]) -> object:
        calls.append(item)
        return object()

    shared = loaders.built(first, build)
    assert loaders.built(first, build) is shared
    assert loaders.built(second, build) is not shared  # an equal but different item
    assert calls == [first, second]


async def test_a_single_load_reads_directly_and_is_held(storage: Storage) -> None:
    """An access pattern the plan marks single reads without a DataLoader;
    the item is held, so the same key later reads nothing."""
    loaders = Loaders(storage, TENANT)
    loaders.single = frozenset({PRODUCT_BY_ID.id})
    with tracing() as trace:
        first = await loaders.item(PRODUCT_BY_ID, product_id="P1")
        again = await loaders.item(PRODUCT_BY_ID, product_id="P1")
    assert first is again and first is not None and first["name"] == "stored P1"
    assert trace.storage_calls == 1
    assert not loaders._items, "no DataLoader was made"
    assert loaders.cached(PRODUCT_BY_ID, product_id="P1") == (True, first)


async def test_other_loads_still_batch(storage: Storage) -> None:
    """Positive control: without the mark, concurrent loads share one
    DataLoader batch; with it, a key the DataLoader is already loading is
    joined rather than read twice."""
    loaders = Loaders(storage, TENANT)
    with tracing() as trace:
        pending = asyncio.ensure_future(loaders.item(PRODUCT_BY_ID, product_id="P1"))
        await asyncio.sleep(0)  # the load is queued in the DataLoader's batch
        loaders.single = frozenset({PRODUCT_BY_ID.id})
        joined = await loaders.item(PRODUCT_BY_ID, product_id="P1")
        assert await pending is joined
    assert trace.storage_calls == 1
    assert PRODUCT_BY_ID.id in loaders._items
