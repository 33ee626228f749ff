"""Differential: a cached store and its uncached twin over one SQLite store,
driven by Hypothesis through interleavings of every read shape and write
kind, answer alike after every acknowledged write; and each invalidation
path, planted broken, makes the comparison fail (docs/design.md, Storage cache).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from random import Random
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from domain.errors import ConditionFailed
from storage import Delete, ItemAbsent, ItemExists, Page, Put, Storage, Update, WriteAction
from storage.access_patterns import (
    BRAND_BY_ID,
    BRAND_PRODUCTS,
    PRODUCT_BY_ID,
    PRODUCT_RECORD,
    REGISTRY,
)
from storage.cache import CachedStorage, Invalidation, invalidation_of
from storage.cache import storage as cache_module
from storage.cache.scope import Scope
from storage.cursor import CursorCodec
from storage.dynamodb import create_table, open_dynamodb
from storage.sqlite import SqliteDriver
from storage.sqlite._ttl import TtlSweeper
from storage.store import Store

TENANT = "t"
_REAL_INVALIDATION = invalidation_of
START = 1_800_000_000.0
PRODUCTS = ("p0", "p1", "p2", "p3")
BRANDS = ("b0", "b1")

products = st.sampled_from(PRODUCTS)
brands = st.sampled_from(BRANDS)
times = st.integers(0, 9)

writes = st.one_of(
    st.tuples(st.just("put"), products, brands, times, st.integers(0, 3)),
    st.tuples(st.just("rename"), products, st.integers(0, 3)),
    st.tuples(st.just("move"), products, times),
    st.tuples(st.just("rebrand"), products, brands),
    st.tuples(st.just("unlist"), products),
    st.tuples(st.just("delete"), products),
    st.tuples(st.just("event"), products, st.integers(0, 2)),
    st.tuples(st.just("brand"), brands, st.none() | st.integers(1, 10)),
)
single = writes.map(lambda w: ("write", w))
reads = st.one_of(
    st.tuples(st.just("get_brand"), brands),
    st.tuples(st.just("get_product"), products),
    st.tuples(st.just("batch"), st.lists(products, min_size=1, max_size=4)),
    st.tuples(st.just("page"), brands, st.integers(1, 3)),
    st.tuples(st.just("page2"), brands, st.integers(1, 2)),
    st.tuples(st.just("record"), products),
)
steps = st.one_of(
    reads,
    single,
    st.tuples(st.just("txn"), st.lists(writes, min_size=2, max_size=3)),
    st.tuples(st.just("cond"), writes, st.booleans()),
    st.tuples(st.just("advance"), st.integers(1, 30)),
    st.just(("sweep",)),
)
histories = st.lists(steps, min_size=1, max_size=30)


class Heard:
    def trusted(self) -> bool:
        return True

    def heard_through(self) -> float:
        return float("inf")


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


def action(write: tuple[Any, ...], condition: Any = None) -> WriteAction:
    kind, target = write[0], write[1]
    if kind == "brand":
        key = BRAND_BY_ID.key(brand_id=target)
        expiry = {} if write[2] is None else {"expiresAt": int(START) + write[2]}
        return Put({"PK": key.pk, "SK": key.sk, "name": target, **expiry}, condition)
    key = PRODUCT_BY_ID.key(product_id=target)
    match kind:
        case "put":
            _, _, brand, time, name = write
            item = {"PK": key.pk, "SK": key.sk, "GSI1PK": f"BRAND#{brand}"}
            item |= {"GSI1SK": f"PRODUCT#{time}#{target}", "name": name}
            return Put(item, condition)
        case "rename":
            return Update(key, set={"name": write[2]}, condition=condition)
        case "move":
            return Update(key, set={"GSI1SK": f"PRODUCT#{write[2]}#{target}"}, condition=condition)
        case "rebrand":
            return Update(key, set={"GSI1PK": f"BRAND#{write[2]}"}, condition=condition)
        case "unlist":
            return Update(key, remove=("GSI1PK",), condition=condition)
        case "delete":
            return Delete(key, condition)
        case "event":
            return Put({"PK": key.pk, "SK": f"EVENT#{write[2]}", "n": write[2]}, condition)
    raise AssertionError(kind)


def shape(answer: Any) -> Any:
    if isinstance(answer, Page):
        return ([dict(item) for item in answer.items], answer.has_next_page)
    if isinstance(answer, list):
        return [shape(item) for item in answer]
    return None if answer is None else dict(answer)


async def read(storage: Storage, step: tuple[Any, ...], cursors: dict[str, str | None]) -> Any:
    kind = step[0]
    if kind == "get_brand":
        return await storage.get(BRAND_BY_ID, brand_id=step[1])
    if kind == "get_product":
        return await storage.get(PRODUCT_BY_ID, product_id=step[1])
    if kind == "batch":
        return await storage.batch_get(PRODUCT_BY_ID, [{"product_id": p} for p in step[1]])
    if kind == "record":
        return await storage.query(PRODUCT_RECORD, {"product_id": step[1]}, tenant=TENANT)
    params = {"brand_id": step[1]}
    after = cursors.get(step[1]) if kind == "page2" else None
    if kind == "page2" and after is None:
        return None
    return await storage.query(BRAND_PRODUCTS, params, tenant=TENANT, first=step[2], after=after)


Opened = tuple[Storage, TtlSweeper | None]
"""The uncached twin, and the TTL sweep of its store where it has one."""


async def _sqlite(clock: Clock) -> Opened:
    driver = SqliteDriver(":memory:", ttl_sweep_seconds=None)
    await driver.wait_ready()
    twin = Store(driver, CursorCodec(bytes(range(32))), REGISTRY)
    return twin, TtlSweeper(driver._writer, clock=clock)


def _prefixed(value: Any, prefix: str) -> Any:
    """``value`` with every product and brand id made unique to one history,
    for a store that histories share (one moto table)."""
    if isinstance(value, tuple | list):
        return type(value)(_prefixed(v, prefix) for v in value)
    if value in PRODUCTS or value in BRANDS:
        return prefix + value
    return value


async def run(
    history: Sequence[tuple[Any, ...]],
    open_twin: Callable[[Clock], Awaitable[Opened]] = _sqlite,
    prefix: str = "",
) -> list[str]:
    """The steps at which the cached store answered otherwise than the store."""
    clock = Clock()
    twin, sweeper = await open_twin(clock)
    cached = CachedStorage(
        twin, max_bytes=1 << 20, ttl_seconds=3600.0, clock=clock, freshness=Heard()
    )
    cursors: dict[str, str | None] = {}
    wrong: list[str] = []

    async def compare(number: int, step: tuple[Any, ...]) -> None:
        step = _prefixed(step, prefix)
        got = await read(cached, step, cursors)
        want = await read(twin, step, cursors)
        if shape(got) != shape(want):
            wrong.append(f"step {number} {step}: {shape(got)} != {shape(want)}")
        if step[0] == "page" and isinstance(got, Page):
            cursors[step[1]] = got.end_cursor

    try:
        for number, step in enumerate(history):
            if step[0] in _READS:
                await compare(number, step)
                continue
            await apply(cached, sweeper, clock, _prefixed(step, prefix))
            # Every shape read again: what the write should have dropped is
            # seen at once, and the cache fills for the next write to drop.
            for again in _every_read():
                await compare(number, again)
    finally:
        await twin.close()
    return wrong


_READS = frozenset({"get_brand", "get_product", "batch", "page", "page2", "record"})


def _every_read() -> Iterator[tuple[Any, ...]]:
    for brand in BRANDS:
        yield ("get_brand", brand)
        for first in (1, 2):
            yield ("page", brand, first)
            yield ("page2", brand, first)
    for product in PRODUCTS:
        yield ("get_product", product)
        yield ("record", product)
    yield ("batch", list(PRODUCTS))


async def apply(
    cached: CachedStorage, sweeper: TtlSweeper | None, clock: Clock, step: tuple[Any, ...]
) -> None:
    kind = step[0]
    if kind == "write":
        await cached.transact_write([action(step[1])])
    elif kind == "txn":
        chosen = {action(w).key: action(w) for w in step[1]}
        await cached.transact_write(list(chosen.values()))
    elif kind == "cond":
        write = action(step[1], ItemExists() if step[2] else ItemAbsent())
        with suppress(ConditionFailed):
            await cached.transact_write([write])
    elif kind == "advance":
        clock.now += step[1]
    elif kind == "sweep" and sweeper is not None:  # moto deletes nothing by TTL
        await sweeper.sweep()


def mismatches(history: Sequence[tuple[Any, ...]]) -> list[str]:
    return asyncio.run(run(history))


@settings(
    max_examples=200,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(histories)
def test_the_cache_answers_as_the_store_after_every_write(
    history: list[tuple[Any, ...]],
) -> None:
    assert mismatches(history) == []


MOTO_TABLE = "cache-differential"


@pytest.fixture(scope="module")
def moto_table(moto_endpoint: str) -> str:
    asyncio.run(create_table(table_name=MOTO_TABLE, region="us-east-1", endpoint_url=moto_endpoint))
    return moto_endpoint


@pytest.mark.slow
@settings(max_examples=12, deadline=None, database=None)
@given(st.lists(steps, min_size=1, max_size=6))
def test_on_dynamodb_too(moto_table: str, history: list[tuple[Any, ...]]) -> None:
    """The same comparison on moto, with fewer and shorter histories (every
    call is an HTTP round trip): the cache is the same code over another engine."""

    async def open_moto(clock: Clock) -> Opened:
        twin = await open_dynamodb(
            table_name=MOTO_TABLE,
            region="us-east-1",
            cursor_key=bytes(range(32)),
            endpoint_url=moto_table,
        )
        return twin, None

    prefix = uuid.uuid4().hex[:8]
    assert asyncio.run(run(history, open_moto, prefix)) == []


# Planted faults: each path that drops entries, broken on purpose.


def _without(kind: type) -> Callable[[Sequence[WriteAction], Scope], Invalidation]:
    real = _REAL_INVALIDATION

    def planted(actions: Sequence[WriteAction], scope: Scope) -> Invalidation:
        return real([a for a in actions if not isinstance(a, kind)], scope)

    return planted


def _no_transactions(actions: Sequence[WriteAction], scope: Scope) -> Invalidation:
    real = _REAL_INVALIDATION
    return real(actions, scope) if len(actions) == 1 else Invalidation(frozenset())


def _stripped(field: str) -> Callable[[Sequence[WriteAction], Scope], Invalidation]:
    def planted(actions: Sequence[WriteAction], scope: Scope) -> Invalidation:
        event = _REAL_INVALIDATION(actions, scope)
        return Invalidation(
            event.keys,
            frozenset() if field == "entered" else event.entered,
            frozenset() if field == "moved" else event.moved,
        )

    return planted


FAULTS: dict[str, tuple[str, Any]] = {
    "put": ("invalidation_of", _without(Put)),
    "update": ("invalidation_of", _without(Update)),
    "delete": ("invalidation_of", _without(Delete)),
    "transaction": ("invalidation_of", _no_transactions),
    "entered-partition": ("invalidation_of", _stripped("entered")),
    "moved-sort-key": ("invalidation_of", _stripped("moved")),
    "item-beyond-the-page": ("_window", lambda page: page.items),
    "ttl-expiry": ("_expiry", lambda items: float("inf")),
}


@contextmanager
def planted(name: str) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        attribute, fault = FAULTS[name]
        patch.setattr(cache_module, attribute, fault)
        yield


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_each_planted_fault_is_caught(fault: str) -> None:
    with planted(fault):
        failing = find(
            histories,
            lambda history: bool(mismatches(history)),
            settings=settings(
                max_examples=2000, database=None, phases=[Phase.generate], deadline=None
            ),
            random=Random(0),  # the same search every run: a fault is caught or not, always
        )
    assert failing  # a history the broken cache answers wrongly
    assert mismatches(failing) == []  # and the real one answers rightly
