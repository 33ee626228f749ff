"""Concurrent writers: atomic counters and conditional creates never lose or duplicate."""

from __future__ import annotations

import asyncio

from domain.errors import ConditionFailed
from storage import ItemAbsent, Put, Storage, Update
from storage.access_patterns import PRODUCT_BY_ID


async def test_concurrent_adds_lose_no_increment(storage: Storage, uid: str) -> None:
    key = PRODUCT_BY_ID.key(product_id=uid)
    await asyncio.gather(
        *(storage.transact_write([Update(key, add={"count": 1})]) for _ in range(50))
    )
    found = await storage.get(PRODUCT_BY_ID, product_id=uid)
    assert found is not None and found["count"] == 50


async def test_concurrent_conditional_creates_admit_exactly_one(storage: Storage, uid: str) -> None:
    key = PRODUCT_BY_ID.key(product_id=uid)
    attempts = [Put({"PK": key.pk, "SK": key.sk, "writer": n}, ItemAbsent()) for n in range(10)]
    results = await asyncio.gather(
        *(storage.transact_write([put]) for put in attempts), return_exceptions=True
    )
    winners = [n for n, result in enumerate(results) if result is None]
    assert len(winners) == 1
    assert all(isinstance(result, ConditionFailed) for result in results if result is not None)
    found = await storage.get(PRODUCT_BY_ID, product_id=uid)
    assert found is not None and found["writer"] == winners[0]
