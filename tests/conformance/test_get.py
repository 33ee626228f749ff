"""GetItem and BatchGetItem through access patterns, and the item value model."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from domain.errors import LimitExceeded
from storage import REGISTRY, Put, Storage, Update
from storage.access_patterns import PRODUCT_BY_ID, PROVENANCE_CHAIN
from storage.keys import KeyTemplate
from storage.registry import AccessPattern, Operation
from storage.trace import tracing

from ._support import BASE_TIME, TENANT, chain_event, put_all, typed

GET_PATTERNS = [ap for ap in REGISTRY if ap.operation is Operation.GET]


def _fields(template: KeyTemplate) -> list[Any]:
    return [part for part in template.parts if not isinstance(part, str)]


def sample_params(ap: AccessPattern, uid: str) -> dict[str, Any]:
    """One value per key parameter, of the type its converter takes; strings
    carry separators so escaping is exercised on every pattern."""
    samples: dict[str, Any] = {
        "str": lambda name: f"{name}#{uid}%",
        "int": lambda name: 7,
        "time": lambda name: BASE_TIME,
    }
    fields = [*_fields(ap.partition_key), *_fields(ap.sort_key.template)]
    return {field.name: samples[field.converter](field.name) for field in fields}


def product(product_id: str, **attributes: Any) -> dict[str, Any]:
    key = PRODUCT_BY_ID.key(product_id=product_id)
    return {"PK": key.pk, "SK": key.sk, "productId": product_id, **attributes}


VALUES: dict[str, Any] = {
    "int": 42,
    "negative": -7,
    "zero": 0,
    "big_int": 12345678901234567890123456789012345678,
    "decimal": Decimal("3.14"),
    "tiny": Decimal("0.000001"),
    "negative_decimal": Decimal("-12.5"),
    "many_digits": Decimal("1.234567890123456789012345678901234567"),
    "bytes": b"\x00\xff\x10binary",
    "true": True,
    "false": False,
    "null": None,
    "empty_string": "",
    "unicode": "h\u00e9llo \u4e16\u754c \U0001f600 \u0000?",
    "list": [1, "two", [Decimal("3.5"), {"four": 4}], None, True, b"\x01"],
    "empty_list": [],
    "empty_map": {},
    "map": {"nested": {"deep": ["", False, Decimal("-0.5")]}, "n": 1, "s": "x"},
}


# --- get ---------------------------------------------------------------------


async def test_get_present(storage: Storage, uid: str) -> None:
    item = product(uid, name="Widget")
    await storage.transact_write([Put(item)])
    assert await storage.get(PRODUCT_BY_ID, product_id=uid) == item


async def test_get_missing(storage: Storage, uid: str) -> None:
    assert await storage.get(PRODUCT_BY_ID, product_id=uid) is None


@pytest.mark.parametrize("ap", GET_PATTERNS, ids=[ap.id for ap in GET_PATTERNS])
async def test_every_get_pattern_round_trips(storage: Storage, uid: str, ap: AccessPattern) -> None:
    params = sample_params(ap, uid)
    key = ap.key(**params)
    item = {"PK": key.pk, "SK": key.sk, "entity": ap.entity, "marker": uid}
    await storage.transact_write([Put(item)])
    assert await storage.get(ap, **params) == item
    assert await storage.batch_get(ap, [params]) == [item]


async def test_keys_never_fold_case_or_collide_through_escaping(storage: Storage, uid: str) -> None:
    ids = [f"{uid}A", f"{uid}a", f"{uid}#x", f"{uid}%23x", f"{uid}%x"]
    await put_all(storage, [product(product_id) for product_id in ids])
    for product_id in ids:
        found = await storage.get(PRODUCT_BY_ID, product_id=product_id)
        assert found is not None and found["productId"] == product_id


# --- the value model -----------------------------------------------------------


@pytest.mark.parametrize("read", ["get", "batch_get", "query"])
async def test_values_round_trip_exactly(storage: Storage, uid: str, read: str) -> None:
    item = chain_event(uid, 1, **VALUES) if read == "query" else product(uid, **VALUES)
    await storage.transact_write([Put(item)])
    if read == "get":
        found = await storage.get(PRODUCT_BY_ID, product_id=uid)
    elif read == "batch_get":
        [found] = await storage.batch_get(PRODUCT_BY_ID, [{"product_id": uid}])
    else:
        page = await storage.query(PROVENANCE_CHAIN, {"product_id": uid}, tenant=TENANT)
        [found] = page.items
    assert found is not None
    assert typed(found) == typed(item)


@pytest.mark.parametrize(
    ("written", "read"),
    [
        (Decimal("2.50"), ("Decimal", "2.5")),
        (Decimal("5.000"), ("int", 5)),
        (Decimal("1E+2"), ("int", 100)),
        (Decimal("-0.0"), ("int", 0)),
        (10**37, ("int", 10**37)),
    ],
    ids=["trailing-zeros", "integral-decimal", "exponent", "negative-zero", "38-digits"],
)
async def test_numbers_come_back_normalised(
    storage: Storage, uid: str, written: Any, read: Any
) -> None:
    await storage.transact_write([Put(product(uid, n=written))])
    found = await storage.get(PRODUCT_BY_ID, product_id=uid)
    assert found is not None
    assert typed(found["n"]) == read


@pytest.mark.parametrize(
    "value",
    [1.5, [1, 2.0], {"nested": 0.1}],
    ids=["float", "float-in-list", "float-in-map"],
)
async def test_float_refused_before_io(storage: Storage, uid: str, value: Any) -> None:
    with tracing() as trace:
        with pytest.raises(LimitExceeded):
            await storage.transact_write([Put(product(uid, value=value))])
        with pytest.raises(LimitExceeded):
            await storage.transact_write(
                [Update(PRODUCT_BY_ID.key(product_id=uid), set={"value": value})]
            )
    assert trace.calls == []
    assert await storage.get(PRODUCT_BY_ID, product_id=uid) is None


@pytest.mark.parametrize(
    "value",
    [10**38 + 1, Decimal("1." + "0" * 37 + "1")],
    ids=["39-digit-int", "39-digit-decimal"],
)
async def test_more_than_38_digits_refused_before_io(
    storage: Storage, uid: str, value: Any
) -> None:
    with tracing() as trace, pytest.raises(LimitExceeded):
        await storage.transact_write([Put(product(uid, n=value))])
    assert trace.calls == []


# --- batch_get -----------------------------------------------------------------


async def test_batch_get_keeps_input_order_with_none_for_missing(
    storage: Storage, uid: str
) -> None:
    items = {name: product(f"{uid}-{name}", name=name) for name in "abc"}
    await put_all(storage, items.values())
    params = [{"product_id": f"{uid}-{name}"} for name in ["c", "missing", "a", "b"]]
    assert await storage.batch_get(PRODUCT_BY_ID, params) == [
        items["c"],
        None,
        items["a"],
        items["b"],
    ]


async def test_batch_get_reads_duplicate_keys_once(storage: Storage, uid: str) -> None:
    a, b = product(f"{uid}-a"), product(f"{uid}-b")
    await put_all(storage, [a, b])
    params = [{"product_id": f"{uid}-{name}"} for name in "aabza"]
    with tracing() as trace:
        found = await storage.batch_get(PRODUCT_BY_ID, params)
    assert found == [a, a, b, None, a]
    assert [call.operation for call in trace.calls] == ["BatchGetItem"]
    assert trace.items == 2


async def test_batch_get_chunks_past_100_keys(storage: Storage, uid: str) -> None:
    items = [product(f"{uid}-{n:03d}", n=n) for n in range(250)]
    await put_all(storage, items[::2])
    with tracing() as trace:
        found = await storage.batch_get(
            PRODUCT_BY_ID, [{"product_id": item["productId"]} for item in items]
        )
    assert found == [item if n % 2 == 0 else None for n, item in enumerate(items)]
    assert [call.operation for call in trace.calls] == ["BatchGetItem"] * 3
    assert trace.items == 125


async def test_batch_get_of_nothing_reads_nothing(storage: Storage) -> None:
    with tracing() as trace:
        assert await storage.batch_get(PRODUCT_BY_ID, []) == []
    assert trace.calls == []
