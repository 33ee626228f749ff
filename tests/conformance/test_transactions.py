"""TransactWriteItems: all or nothing, the failing action named, limits checked first."""

from __future__ import annotations

from typing import Any

import pytest

from domain.errors import AccessPatternError, ConditionFailed, LimitExceeded
from storage import (
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
from storage.access_patterns import PRODUCT_BY_ID
from storage.limits import ITEM_MAX_BYTES, TRANSACT_MAX_ITEMS
from storage.trace import tracing

from ._support import product, product_key, read_product


async def seed(storage: Storage, uid: str) -> None:
    await storage.transact_write(
        [
            Put(product(f"{uid}-counter", count=10)),
            Put(product(f"{uid}-doomed", v=1)),
            Put(product(f"{uid}-guard", v=1)),
        ]
    )


def four_actions(uid: str, failing: int) -> list[WriteAction]:
    """Create, increment, delete, check; the action at ``failing`` gets a
    condition that cannot hold."""
    never = Compare("v", Comparison.EQ, 999)
    return [
        Put(product(f"{uid}-new", v=1), never if failing == 0 else ItemAbsent()),
        Update(
            product_key(f"{uid}-counter"),
            add={"count": 1},
            condition=never if failing == 1 else ItemExists(),
        ),
        Delete(
            product_key(f"{uid}-doomed"), never if failing == 2 else Compare("v", Comparison.EQ, 1)
        ),
        ConditionCheck(
            product_key(f"{uid}-guard"), never if failing == 3 else Compare("v", Comparison.EQ, 1)
        ),
    ]


async def test_all_actions_apply_together(storage: Storage, uid: str) -> None:
    await seed(storage, uid)
    await storage.transact_write(four_actions(uid, failing=-1))
    assert await read_product(storage, f"{uid}-new") == product(f"{uid}-new", v=1)
    assert await read_product(storage, f"{uid}-counter") == product(f"{uid}-counter", count=11)
    assert await read_product(storage, f"{uid}-doomed") is None
    assert await read_product(storage, f"{uid}-guard") == product(f"{uid}-guard", v=1)


@pytest.mark.parametrize("failing", [0, 1, 2, 3])
async def test_a_failing_action_leaves_nothing_written_and_is_named(
    storage: Storage, uid: str, failing: int
) -> None:
    await seed(storage, uid)
    with pytest.raises(ConditionFailed) as raised:
        await storage.transact_write(four_actions(uid, failing))
    assert raised.value.index == failing
    assert await read_product(storage, f"{uid}-new") is None
    assert await read_product(storage, f"{uid}-counter") == product(f"{uid}-counter", count=10)
    assert await read_product(storage, f"{uid}-doomed") == product(f"{uid}-doomed", v=1)


async def test_the_first_failing_action_is_named_when_several_fail(
    storage: Storage, uid: str
) -> None:
    await seed(storage, uid)
    actions: list[WriteAction] = [
        Put(product(f"{uid}-a")),
        ConditionCheck(product_key(f"{uid}-missing"), ItemExists()),
        Put(product(f"{uid}-guard"), ItemAbsent()),
    ]
    with pytest.raises(ConditionFailed) as raised:
        await storage.transact_write(actions)
    assert raised.value.index == 1
    assert await read_product(storage, f"{uid}-a") is None


async def test_the_maximum_number_of_actions(storage: Storage, uid: str) -> None:
    await storage.transact_write(
        [Put(product(f"{uid}-{n}", n=n)) for n in range(TRANSACT_MAX_ITEMS)]
    )
    found = await storage.batch_get(
        PRODUCT_BY_ID, [{"product_id": f"{uid}-{n}"} for n in range(TRANSACT_MAX_ITEMS)]
    )
    assert [item["n"] if item else None for item in found] == list(range(TRANSACT_MAX_ITEMS))


async def test_too_many_actions_are_refused_before_io(storage: Storage, uid: str) -> None:
    actions = [Put(product(f"{uid}-{n}")) for n in range(TRANSACT_MAX_ITEMS + 1)]
    with tracing() as trace, pytest.raises(LimitExceeded):
        await storage.transact_write(actions)
    assert trace.calls == []
    assert await read_product(storage, f"{uid}-0") is None


@pytest.mark.parametrize(
    "second",
    [
        lambda uid: ConditionCheck(product_key(uid), ItemAbsent()),
        lambda uid: Update(product_key(uid), add={"n": 1}),
        lambda uid: Put(product(uid, other=True)),
    ],
    ids=["check", "update", "put"],
)
async def test_two_actions_on_one_item_are_refused_before_io(
    storage: Storage, uid: str, second: Any
) -> None:
    with tracing() as trace, pytest.raises(LimitExceeded):
        await storage.transact_write([Put(product(uid)), Put(product(f"{uid}-other")), second(uid)])
    assert trace.calls == []
    assert await read_product(storage, uid) is None


async def test_an_empty_transaction_is_refused(storage: Storage) -> None:
    with tracing() as trace, pytest.raises(AccessPatternError):
        await storage.transact_write([])
    assert trace.calls == []


async def test_a_transaction_over_4mb_is_refused_before_io(storage: Storage, uid: str) -> None:
    body = "x" * (ITEM_MAX_BYTES - 1024)
    actions = [Put(product(f"{uid}-{n}", body=body)) for n in range(11)]
    with tracing() as trace, pytest.raises(LimitExceeded):
        await storage.transact_write(actions)
    assert trace.calls == []
