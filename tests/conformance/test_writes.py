"""Put, Update, Delete and ConditionCheck, and DynamoDB's condition semantics."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from domain.errors import ConditionFailed, LimitExceeded
from storage import (
    All,
    Any_,
    AttributeAbsent,
    AttributeExists,
    Compare,
    Comparison,
    ConditionCheck,
    Delete,
    ItemAbsent,
    ItemExists,
    Put,
    Storage,
    Update,
    WriteAction,
)
from storage.conditions import Condition

from ._support import MotoDeviation, product, product_key, read_product, typed

# --- Put ---------------------------------------------------------------------------


async def test_put_replaces_the_whole_item(storage: Storage, uid: str) -> None:
    await storage.transact_write([Put(product(uid, a=1, b=2))])
    await storage.transact_write([Put(product(uid, a=3))])
    assert await read_product(storage, uid) == product(uid, a=3)


async def test_conditional_create_of_a_new_item(storage: Storage, uid: str) -> None:
    await storage.transact_write([Put(product(uid, a=1), ItemAbsent())])
    assert await read_product(storage, uid) == product(uid, a=1)


async def test_conditional_create_of_an_existing_item_fails(storage: Storage, uid: str) -> None:
    await storage.transact_write([Put(product(uid, a=1))])
    with pytest.raises(ConditionFailed) as raised:
        await storage.transact_write([Put(product(uid, a=2), ItemAbsent())])
    assert raised.value.index == 0
    assert await read_product(storage, uid) == product(uid, a=1)


async def test_put_if_exists_on_a_missing_item_fails(storage: Storage, uid: str) -> None:
    with pytest.raises(ConditionFailed):
        await storage.transact_write([Put(product(uid, a=1), ItemExists())])
    assert await read_product(storage, uid) is None


# --- Update ------------------------------------------------------------------------


async def test_update_set_add_remove_and_set_if_absent(storage: Storage, uid: str) -> None:
    await storage.transact_write(
        [
            Put(
                product(
                    uid,
                    name="old",
                    count=5,
                    total=Decimal("1.25"),
                    gone="x",
                    kept="original",
                    tags=["a"],
                )
            )
        ]
    )
    await storage.transact_write(
        [
            Update(
                product_key(uid),
                set={"name": "new", "meta": {"nested": [1, {"deep": True}]}, "tags": ["b", "c"]},
                add={"count": 3, "total": Decimal("0.75"), "fresh": -2},
                remove=("gone", "never_there"),
                set_if_absent={"kept": "replacement", "added": "first"},
            )
        ]
    )
    found = await read_product(storage, uid)
    assert found is not None
    assert typed(found) == typed(
        product(
            uid,
            name="new",
            count=8,
            total=2,
            fresh=-2,
            kept="original",
            added="first",
            meta={"nested": [1, {"deep": True}]},
            tags=["b", "c"],
        )
    )


async def test_add_creates_the_missing_item_and_attribute(storage: Storage, uid: str) -> None:
    await storage.transact_write([Update(product_key(uid), add={"count": 1})])
    await storage.transact_write(
        [Update(product_key(uid), add={"count": 1, "other": Decimal("0.5")})]
    )
    found = await read_product(storage, uid)
    assert found is not None
    assert typed(found) == typed(product(uid, count=2, other=Decimal("0.5")))


async def test_update_of_a_missing_item_creates_it(storage: Storage, uid: str) -> None:
    await storage.transact_write(
        [Update(product_key(uid), set={"name": "made"}, set_if_absent={"created": 1})]
    )
    assert await read_product(storage, uid) == product(uid, name="made", created=1)


async def test_update_if_exists_on_a_missing_item_fails_and_creates_nothing(
    storage: Storage, uid: str
) -> None:
    with pytest.raises(ConditionFailed) as raised:
        await storage.transact_write(
            [Update(product_key(uid), add={"count": 1}, condition=ItemExists())]
        )
    assert raised.value.index == 0
    assert await read_product(storage, uid) is None


async def test_add_to_a_non_number_is_refused_and_changes_nothing(
    storage: Storage, uid: str, moto_deviation: MotoDeviation
) -> None:
    moto_deviation("UpdateItem applies SET before failing on ADD to a string")
    await storage.transact_write([Put(product(uid, name="text"))])
    with pytest.raises(LimitExceeded):
        await storage.transact_write([Update(product_key(uid), add={"name": 1}, set={"other": 1})])
    assert await read_product(storage, uid) == product(uid, name="text")


# --- conditions --------------------------------------------------------------------

STORED: dict[str, Any] = {"n": 5, "d": Decimal("2.5"), "s": "m", "b": b"\x10", "t": True, "z": None}

COMPARISONS: list[tuple[str, str, Any, bool]] = [
    ("n", "=", 5, True),
    ("n", "=", 6, False),
    ("n", "=", Decimal("5.0"), True),
    ("n", "<>", 5, False),
    ("n", "<>", 6, True),
    ("n", "<", 6, True),
    ("n", "<", 5, False),
    ("n", "<=", 5, True),
    ("n", "<=", 4, False),
    ("n", ">", 4, True),
    ("n", ">", 5, False),
    ("n", ">=", 5, True),
    ("n", ">=", 6, False),
    ("n", "<", Decimal("5.01"), True),
    ("n", ">", -10, True),
    ("d", ">", 2, True),
    ("d", "<", Decimal("2.50001"), True),
    ("s", "=", "m", True),
    ("s", "<", "n", True),
    ("s", ">", "M", True),
    ("s", "<", "m\u00e9", True),
    ("s", ">=", "mm", False),
    ("b", "=", b"\x10", True),
    ("b", "<", b"\x11", True),
    ("b", ">", b"\x0f\xff", True),
    ("t", "=", True, True),
    ("t", "<>", False, True),
    ("z", "=", None, True),
    ("z", "<>", None, False),
    # a missing attribute: only <> holds
    ("missing", "=", 1, False),
    ("missing", "<>", 1, True),
    ("missing", "<", 1, False),
    ("missing", "<=", 1, False),
    ("missing", ">", 1, False),
    ("missing", ">=", 1, False),
    # another type: never equal, never ordered
    ("n", "=", "5", False),
    ("n", "<>", "5", True),
    ("s", "=", b"m", False),
    ("t", "=", 1, False),
]


@pytest.mark.parametrize(
    ("attribute", "op", "value", "holds"),
    COMPARISONS,
    ids=[f"{a}{op}{v!r}" for a, op, v, _ in COMPARISONS],
)
async def test_compare(
    storage: Storage, uid: str, attribute: str, op: str, value: Any, holds: bool
) -> None:
    await storage.transact_write([Put(product(uid, **STORED))])
    await assert_condition(storage, uid, Compare(attribute, Comparison(op), value), holds)


TYPE_MISMATCHED_ORDERINGS: list[tuple[str, str, Any]] = [
    ("n", "<", "6"),
    ("n", ">=", "0"),
    ("s", ">", 1),
    ("s", "<", b"z"),
    ("b", "<", "z"),
]


@pytest.mark.parametrize(
    ("attribute", "op", "value"),
    TYPE_MISMATCHED_ORDERINGS,
    ids=[f"{a}{op}{v!r}" for a, op, v in TYPE_MISMATCHED_ORDERINGS],
)
async def test_ordering_across_types_is_false(
    storage: Storage, uid: str, attribute: str, op: str, value: Any
) -> None:
    await storage.transact_write([Put(product(uid, **STORED))])
    await assert_condition(storage, uid, Compare(attribute, Comparison(op), value), holds=False)


async def test_binary_orders_by_unsigned_bytes(storage: Storage, uid: str) -> None:
    await storage.transact_write([Put(product(uid, b=b"\x00"))])
    await assert_condition(storage, uid, Compare("b", Comparison.LT, b"\xff"), holds=True)


@pytest.mark.parametrize(
    ("condition", "holds"),
    [
        (AttributeExists("n"), True),
        (AttributeExists("missing"), False),
        (AttributeExists("z"), True),
        (AttributeAbsent("missing"), True),
        (AttributeAbsent("n"), False),
        (All(Compare("n", Comparison.EQ, 5), AttributeExists("s")), True),
        (All(Compare("n", Comparison.EQ, 5), AttributeExists("missing")), False),
        (Any_(Compare("n", Comparison.EQ, 6), AttributeExists("s")), True),
        (Any_(Compare("n", Comparison.EQ, 6), AttributeExists("missing")), False),
        (All(ItemExists(), Any_(AttributeAbsent("n"), Compare("s", Comparison.NE, "m"))), False),
        (ItemExists(), True),
        (ItemAbsent(), False),
    ],
    ids=lambda value: repr(value) if not isinstance(value, bool) else str(value),
)
async def test_composed_conditions(
    storage: Storage, uid: str, condition: Condition, holds: bool
) -> None:
    await storage.transact_write([Put(product(uid, **STORED))])
    await assert_condition(storage, uid, condition, holds)


async def assert_condition(storage: Storage, uid: str, condition: Condition, holds: bool) -> None:
    """Checks the condition three ways: guarding an Update, a Put, and a
    ConditionCheck in a transaction."""
    before = await read_product(storage, uid)
    update = Update(product_key(uid), add={"touched": 1}, condition=condition)
    check: list[WriteAction] = [
        ConditionCheck(product_key(uid), condition),
        Put(product(f"{uid}-side")),
    ]
    if holds:
        await storage.transact_write([update])
        await storage.transact_write(check)
        await storage.transact_write([Put(product(uid, replaced=True), condition)])
        assert await read_product(storage, uid) == product(uid, replaced=True)
        assert await read_product(storage, f"{uid}-side") is not None
        return
    with pytest.raises(ConditionFailed):
        await storage.transact_write([update])
    with pytest.raises(ConditionFailed) as raised:
        await storage.transact_write(check)
    assert raised.value.index == 0
    with pytest.raises(ConditionFailed):
        await storage.transact_write([Put(product(uid, replaced=True), condition)])
    assert await read_product(storage, uid) == before
    assert await read_product(storage, f"{uid}-side") is None


# --- Delete and ConditionCheck -------------------------------------------------------


async def test_delete(storage: Storage, uid: str) -> None:
    await storage.transact_write([Put(product(uid))])
    await storage.transact_write([Delete(product_key(uid))])
    assert await read_product(storage, uid) is None


async def test_delete_of_a_missing_item_is_a_no_op(storage: Storage, uid: str) -> None:
    await storage.transact_write([Delete(product_key(uid))])
    assert await read_product(storage, uid) is None


async def test_delete_with_a_holding_condition(storage: Storage, uid: str) -> None:
    await storage.transact_write([Put(product(uid, version=2))])
    await storage.transact_write([Delete(product_key(uid), Compare("version", Comparison.EQ, 2))])
    assert await read_product(storage, uid) is None


async def test_delete_with_a_failing_condition_keeps_the_item(storage: Storage, uid: str) -> None:
    await storage.transact_write([Put(product(uid, version=2))])
    with pytest.raises(ConditionFailed):
        await storage.transact_write(
            [Delete(product_key(uid), Compare("version", Comparison.EQ, 1))]
        )
    assert await read_product(storage, uid) == product(uid, version=2)


async def test_delete_if_exists_on_a_missing_item_fails(storage: Storage, uid: str) -> None:
    with pytest.raises(ConditionFailed):
        await storage.transact_write([Delete(product_key(uid), ItemExists())])


@pytest.mark.parametrize("exists", [True, False])
async def test_a_lone_condition_check(storage: Storage, uid: str, exists: bool) -> None:
    if exists:
        await storage.transact_write([Put(product(uid, a=1))])
        await storage.transact_write([ConditionCheck(product_key(uid), ItemExists())])
        assert await read_product(storage, uid) == product(uid, a=1)
    else:
        with pytest.raises(ConditionFailed) as raised:
            await storage.transact_write([ConditionCheck(product_key(uid), ItemExists())])
        assert raised.value.index == 0
        assert await read_product(storage, uid) is None
