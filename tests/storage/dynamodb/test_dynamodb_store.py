"""Store over the DynamoDB backend, end to end against moto: one client for
everything, and UnprocessedKeys retried until every key is read."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from aiobotocore.session import AioSession

from domain.errors import ConditionFailed
from storage import ItemAbsent, Key, Put, Storage, Update
from storage.access_patterns import (
    BRAND_BY_ID,
    BRAND_PRODUCTS,
    BRAND_STATS,
    BRANDS_NEWEST,
    REGISTRY,
)
from storage.cursor import CursorCodec
from storage.dynamodb import DynamoDriver, open_dynamodb
from storage.store import Store
from storage.trace import tracing
from tests._support.wire import Send, intercept

REGION = "us-east-1"
Unique = Callable[[str], str]


@pytest.fixture
def client_creations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    created: list[str] = []
    create = AioSession.create_client

    def counting(self: AioSession, service_name: str, *args: Any, **kwargs: Any) -> Any:
        created.append(service_name)
        return create(self, service_name, *args, **kwargs)

    monkeypatch.setattr(AioSession, "create_client", counting)
    return created


@pytest.fixture
async def store(
    moto_endpoint: str, dynamodb_table: str, client_creations: list[str]
) -> AsyncIterator[Storage]:
    store = await open_dynamodb(
        table_name=dynamodb_table,
        region=REGION,
        cursor_key=CursorCodec.generate_key(),
        endpoint_url=moto_endpoint,
        access_key_id="testing",
        secret_access_key="testing",
    )
    yield store
    await store.close()


def _product(brand: str, n: int) -> Put:
    return Put(
        {
            "PK": f"PRODUCT#{brand}-{n}",
            "SK": "META",
            "GSI1PK": f"BRAND#{brand}",
            "GSI1SK": f"PRODUCT#{n}",
        }
    )


async def test_get_put_query_and_transactions_end_to_end(store: Storage, unique: Unique) -> None:
    brand = unique("acme")
    profile = {"PK": f"BRAND#{brand}", "SK": "PROFILE", "name": "Acme"}
    await store.transact_write([Put(profile, ItemAbsent())])
    await store.transact_write(
        [
            *(_product(brand, n) for n in range(5)),
            Update(Key(f"BRAND#{brand}", "STATS"), add={"productCount": 5}),
        ]
    )

    with tracing() as trace:
        read = await store.get(BRAND_BY_ID, brand_id=brand)
        stats = await store.get(BRAND_STATS, brand_id=brand)
        first = await store.query(BRAND_PRODUCTS, {"brand_id": brand}, tenant=brand, first=2)
        rest = await store.query(
            BRAND_PRODUCTS, {"brand_id": brand}, tenant=brand, first=10, after=first.end_cursor
        )

    assert read == profile
    assert stats is not None and stats["productCount"] == 5
    assert [i["GSI1SK"] for i in first.items] == ["PRODUCT#4", "PRODUCT#3"]
    assert first.has_next_page
    assert [i["GSI1SK"] for i in rest.items] == ["PRODUCT#2", "PRODUCT#1", "PRODUCT#0"]
    assert not rest.has_next_page
    assert [c.operation for c in trace.calls] == ["GetItem", "GetItem", "Query", "Query"]
    assert all(c.capacity > 0 for c in trace.calls)

    with pytest.raises(ConditionFailed) as failed:
        await store.transact_write(
            [
                Update(Key(f"BRAND#{brand}", "STATS"), add={"productCount": 1}),
                Put({**profile, "name": "Impostor"}, ItemAbsent()),
            ]
        )
    assert failed.value.index == 1
    assert await store.get(BRAND_BY_ID, brand_id=brand) == profile
    assert (await store.get(BRAND_STATS, brand_id=brand) or {})["productCount"] == 5


async def test_one_client_serves_every_call(
    store: Storage, unique: Unique, client_creations: list[str]
) -> None:
    brand = unique("reuse")
    await store.transact_write([Put({"PK": f"BRAND#{brand}", "SK": "PROFILE"})])
    await store.transact_write(
        [Put({"PK": "BRAND_INDEX", "SK": f"BRAND#{brand}"}), _product(brand, 1)]
    )
    for _ in range(3):
        await store.get(BRAND_BY_ID, brand_id=brand)
    await store.batch_get(BRAND_BY_ID, [{"brand_id": brand}, {"brand_id": unique("none")}])
    await store.query(BRANDS_NEWEST, {}, tenant="admin", first=1)

    assert client_creations == ["dynamodb"]


async def test_unprocessed_keys_are_retried_until_read(
    driver: DynamoDriver, unique: Unique, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DynamoDB returns part of a batch under load; Store retries the rest."""
    brands = [unique(f"batch{n}") for n in range(5)]
    await driver.transact_write(
        [Put({"PK": f"BRAND#{b}", "SK": "PROFILE", "name": b}) for b in brands]
    )
    requested: list[int] = []

    async def one_at_a_time(parameters: dict[str, Any], send: Send) -> dict[str, Any]:
        request = parameters["RequestItems"][driver.table_name]
        requested.append(len(request["Keys"]))
        first = {**request, "Keys": request["Keys"][:1]}
        response = await send({**parameters, "RequestItems": {driver.table_name: first}})
        if len(request["Keys"]) > 1:
            response["UnprocessedKeys"] = {
                driver.table_name: {**request, "Keys": request["Keys"][1:]}
            }
        return response

    intercept(monkeypatch, driver, "BatchGetItem", one_at_a_time)
    monkeypatch.setattr("storage.store.backoff_delay", lambda attempt: 0.0)
    store = Store(driver, CursorCodec(CursorCodec.generate_key()), REGISTRY)

    items = await store.batch_get(BRAND_BY_ID, [{"brand_id": b} for b in [*brands, "missing"]])

    assert [i["name"] if i else None for i in items] == [*brands, None]
    assert requested == [6, 5, 4, 3, 2, 1]
