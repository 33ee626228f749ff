"""DynamoDB's limits and the access-pattern contract, refused alike by both backends."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from domain.errors import AccessPatternError, LimitExceeded
from storage import Key, KeyTemplate, Put, Storage, Update
from storage.access_patterns import (
    HEALTH_PROBE,
    PRODUCT_BY_ID,
    PROVENANCE_CHAIN,
    THREAT_BY_ID,
)
from storage.limits import ITEM_MAX_BYTES, PARTITION_KEY_MAX_BYTES, SORT_KEY_MAX_BYTES
from storage.registry import AccessPattern, Operation, SortCondition
from storage.table import IndexName
from storage.trace import tracing
from storage.values import item_size

from ._support import BASE_TIME, TENANT, MotoDeviation, product, product_key


def padded(uid: str, size: int) -> dict[str, Any]:
    """A product item of exactly ``size`` bytes as DynamoDB counts them."""
    item = product(uid, body="")
    item["body"] = "x" * (size - item_size(item))
    assert item_size(item) == size
    return item


# --- item size ---------------------------------------------------------------------


async def test_an_item_of_400000_bytes_round_trips(storage: Storage, uid: str) -> None:
    """Not 409,600: moto refuses items over 405,000 bytes by its own count."""
    item = padded(uid, 400_000)
    await storage.transact_write([Put(item)])
    assert await storage.get(PRODUCT_BY_ID, product_id=uid) == item


async def test_put_over_400kb_is_refused_before_io(storage: Storage, uid: str) -> None:
    with tracing() as trace, pytest.raises(LimitExceeded):
        await storage.transact_write([Put(padded(uid, ITEM_MAX_BYTES + 1))])
    assert trace.calls == []


async def test_an_update_that_grows_an_item_past_400kb_is_refused(
    storage: Storage, uid: str
) -> None:
    item = padded(uid, 300 * 1024)
    await storage.transact_write([Put(item)])
    with pytest.raises(LimitExceeded):
        await storage.transact_write([Update(product_key(uid), set={"more": "y" * (150 * 1024)})])
    assert await storage.get(PRODUCT_BY_ID, product_id=uid) == item


async def test_an_update_creating_an_item_over_400kb_is_refused(
    storage: Storage, uid: str, moto_deviation: MotoDeviation
) -> None:
    moto_deviation("a refused UpdateItem of a missing item leaves a key-only item behind")
    with pytest.raises(LimitExceeded):
        await storage.transact_write([Update(product_key(uid), set={"body": "y" * (401 * 1024)})])
    assert await storage.get(PRODUCT_BY_ID, product_id=uid) is None


@pytest.mark.parametrize(
    "value", [Decimal("1E+126"), Decimal("1E-131"), Decimal("-1E+126")], ids=str
)
async def test_numbers_outside_dynamodb_range_are_refused(
    storage: Storage, uid: str, value: Decimal
) -> None:
    with pytest.raises(LimitExceeded):
        await storage.transact_write([Put(product(uid, n=value))])
    assert await storage.get(PRODUCT_BY_ID, product_id=uid) is None


@pytest.mark.parametrize(
    "value",
    [Decimal("9.9999999999999999999999999999999999999E+125"), Decimal("1E-130")],
    ids=["max", "min"],
)
async def test_numbers_at_dynamodb_range_ends_round_trip(
    storage: Storage, uid: str, value: Decimal
) -> None:
    await storage.transact_write([Put(product(uid, n=value))])
    found = await storage.get(PRODUCT_BY_ID, product_id=uid)
    assert found is not None and found["n"] == value


# --- key lengths ---------------------------------------------------------------------


async def test_partition_key_at_2048_bytes_is_accepted(storage: Storage) -> None:
    product_id = "p" * (PARTITION_KEY_MAX_BYTES - len("PRODUCT#"))
    assert await storage.get(PRODUCT_BY_ID, product_id=product_id) is None


@pytest.mark.parametrize(
    "product_id", ["p" * 2041, "\u00e9" * 1021], ids=["ascii", "two-byte-chars"]
)
async def test_partition_key_over_2048_bytes_is_refused_before_io(
    storage: Storage, product_id: str
) -> None:
    with tracing() as trace:
        with pytest.raises(LimitExceeded):
            await storage.get(PRODUCT_BY_ID, product_id=product_id)
        with pytest.raises(LimitExceeded):
            await storage.batch_get(PRODUCT_BY_ID, [{"product_id": product_id}])
        with pytest.raises(LimitExceeded):
            await storage.query(PROVENANCE_CHAIN, {"product_id": product_id}, tenant=TENANT)
        with pytest.raises(LimitExceeded):
            await storage.transact_write([Put(product(product_id))])
    assert trace.calls == []


async def test_sort_key_over_1024_bytes_is_refused_before_io(storage: Storage, uid: str) -> None:
    params = {
        "brand_id": uid,
        "month": "2026-01",
        "detected_at": BASE_TIME,
        "threat_type": "T",
        "product_id": "p" * SORT_KEY_MAX_BYTES,
    }
    with tracing() as trace:
        with pytest.raises(LimitExceeded):
            await storage.get(THREAT_BY_ID, **params)
        with pytest.raises(LimitExceeded):
            await storage.transact_write([Put({"PK": "X", "SK": "s" * (SORT_KEY_MAX_BYTES + 1)})])
        with pytest.raises(LimitExceeded):
            await storage.transact_write(
                [Update(Key("X", "s" * (SORT_KEY_MAX_BYTES + 1)), add={"n": 1})]
            )
    assert trace.calls == []


async def test_empty_key_values_are_refused_before_io(storage: Storage, uid: str) -> None:
    with tracing() as trace:
        with pytest.raises(LimitExceeded):
            await storage.get(PRODUCT_BY_ID, product_id="")
        with pytest.raises(LimitExceeded):
            await storage.transact_write([Put({**product(uid), "GSI1PK": "", "GSI1SK": "x"})])
    assert trace.calls == []


# --- the access-pattern contract --------------------------------------------------------

UNREGISTERED = AccessPattern(
    "AP99",
    "not registered",
    Operation.GET,
    IndexName.TABLE,
    KeyTemplate("PRODUCT#{product_id}"),
    SortCondition("=", "META"),
    "Product",
)
UNREGISTERED_QUERY = AccessPattern(
    "AP98",
    "not registered",
    Operation.QUERY,
    IndexName.TABLE,
    KeyTemplate("PRODUCT#{product_id}"),
    SortCondition("begins_with", "EVENT#"),
    "Product",
)


@pytest.mark.parametrize(
    "call",
    [
        lambda s, uid: s.get(UNREGISTERED, product_id=uid),
        lambda s, uid: s.batch_get(UNREGISTERED, [{"product_id": uid}]),
        lambda s, uid: s.query(UNREGISTERED_QUERY, {"product_id": uid}, tenant=TENANT),
        lambda s, uid: s.get(PRODUCT_BY_ID),
        lambda s, uid: s.batch_get(PRODUCT_BY_ID, [{"product_id": uid}, {}]),
        lambda s, uid: s.query(PROVENANCE_CHAIN, {}, tenant=TENANT),
        lambda s, uid: s.get(PRODUCT_BY_ID, product_id=uid, brand_id=uid),
        lambda s, uid: s.batch_get(PRODUCT_BY_ID, [{"product_id": uid, "extra": 1}]),
        lambda s, uid: s.query(PROVENANCE_CHAIN, {"product_id": uid, "sequence": 1}, tenant=TENANT),
        lambda s, uid: s.get(HEALTH_PROBE, product_id=uid),
        lambda s, uid: s.get(PROVENANCE_CHAIN, product_id=uid),
        lambda s, uid: s.batch_get(PROVENANCE_CHAIN, [{"product_id": uid}]),
        lambda s, uid: s.query(PRODUCT_BY_ID, {"product_id": uid}, tenant=TENANT),
        lambda s, uid: s.get(PRODUCT_BY_ID, product_id=7),
    ],
    ids=[
        "unregistered-get",
        "unregistered-batch-get",
        "unregistered-query",
        "missing-param-get",
        "missing-param-batch-get",
        "missing-param-query",
        "unknown-param-get",
        "unknown-param-batch-get",
        "unknown-param-query",
        "param-on-a-fixed-key",
        "get-through-a-query-pattern",
        "batch-get-through-a-query-pattern",
        "query-through-a-get-pattern",
        "wrong-param-type",
    ],
)
async def test_access_pattern_misuse_is_refused_before_io(
    storage: Storage, uid: str, call: Any
) -> None:
    with tracing() as trace, pytest.raises(AccessPatternError):
        await call(storage, uid)
    assert trace.calls == []
