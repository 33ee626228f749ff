"""Batch registration: the whole fee is reserved first, settled per chunk,
and what is left is released, at once or when the reservation expires."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest

from domain.errors import ConditionFailed, Conflict, InsufficientCredits
from services.ledger import FeeReservation, ledger_failure, release_expired
from services.ledger.items import HOLD_PREFIX
from services.products.registration import PRODUCTS_PER_TRANSACTION
from services.transact import transact

REGISTER_MANY = """mutation($inputs: [RegisterProductInput!]!, $key: String) {
    registerProducts(inputs: $inputs, idempotencyKey: $key) { id }
}"""
VIEW = """query($id: ID!) {
    brand(id: $id) {
        stats { productCount }
        ledger { statement(first: 100) { edges { node { amount transaction { memo } } } } }
    }
}"""


def batch(brand, count: int, prefix: str = "Item") -> dict[str, object]:
    return {"inputs": [{"brandId": brand.id, "name": f"{prefix} {n:02d}"} for n in range(count)]}


async def fees(api, brand) -> list[str]:
    data = await api.data(VIEW, {"id": brand.id}, as_=brand.principal)
    edges = data["brand"]["ledger"]["statement"]["edges"]
    return [e["node"]["amount"] for e in edges if e["node"]["amount"].startswith("-")]


async def holds(api, brand) -> list[str]:
    item = await api.balance_item(brand)
    return [name for name in item or {} if name.startswith(HOLD_PREFIX)]


def test_a_batch_of_forty_spans_several_transactions() -> None:
    assert PRODUCTS_PER_TRANSACTION < 40 <= 3 * PRODUCTS_PER_TRANSACTION


async def test_a_batch_reserves_then_settles_each_chunk(fresh_api) -> None:
    api = fresh_api
    brand = await api.brand("FREE")
    await api.grant(brand, "40.00")
    body = await api.execute(REGISTER_MANY, batch(brand, 40), as_=brand.principal)
    assert "errors" not in body, body
    balance = await api.balance(brand)
    assert (balance["posted"], balance["reserved"], balance["available"]) == (
        "10.00",
        "0.00",
        "10.00",
    )
    sizes = [min(PRODUCTS_PER_TRANSACTION, 40 - i) for i in range(0, 40, PRODUCTS_PER_TRANSACTION)]
    # One fee transaction per chunk; a batch shares one timestamp, so the
    # statement orders them by transaction id.
    assert sorted(await fees(api, brand)) == sorted(f"-{n}.00" for n in sizes)
    assert await holds(api, brand) == []


async def test_a_batch_the_brand_cannot_pay_for_writes_nothing(api) -> None:
    brand = await api.brand("FREE")
    body = await api.execute(REGISTER_MANY, batch(brand, 30), as_=brand.principal)
    assert api.codes(body) == ["INSUFFICIENT_CREDITS"]
    assert "30.00" in body["errors"][0]["message"]
    data = await api.data(VIEW, {"id": brand.id}, as_=brand.principal)
    assert data["brand"]["stats"] == {"productCount": 0}
    balance = await api.balance(brand)
    assert (balance["available"], balance["reserved"], balance["version"]) == ("10.00", "0.00", 1)


async def test_a_failed_chunk_keeps_what_committed_and_releases_the_rest(fresh_api) -> None:
    api = fresh_api
    brand = await api.brand("FREE")
    await api.grant(brand, "40.00")
    assert "errors" not in await api.register_product(brand, name="Item 25")
    body = await api.execute(REGISTER_MANY, batch(brand, 30), as_=brand.principal)
    assert api.codes(body) == ["CONFLICT"]
    committed = PRODUCTS_PER_TRANSACTION
    assert len(body["errors"][0]["extensions"]["registeredIds"]) == committed
    balance = await api.balance(brand)
    paid = 1 + committed
    assert balance["reserved"] == "0.00"
    assert balance["available"] == balance["posted"] == f"{50 - paid}.00"
    assert await fees(api, brand) == ["-1.00", f"-{committed}.00"]
    assert await holds(api, brand) == []


async def test_a_batch_of_one_chunk_pays_directly(sqlite_api) -> None:
    api = sqlite_api
    brand = await api.brand("FREE")
    body = await api.execute(REGISTER_MANY, batch(brand, 5), as_=brand.principal)
    assert "errors" not in body, body
    balance = await api.balance(brand)
    assert (balance["available"], balance["version"]) == ("5.00", 2)
    assert await fees(api, brand) == ["-5.00"]


async def test_an_expired_reservation_is_released_and_cannot_be_settled(sqlite_api) -> None:
    api = sqlite_api
    brand = await api.brand("FREE")
    now = api.clock()
    reservation = await FeeReservation.reserve(
        api.storage, brand.id, 3, Decimal("1.00"), now, ttl=timedelta(minutes=1)
    )
    assert reservation is not None
    balance = await api.balance(brand)
    assert (balance["posted"], balance["reserved"], balance["available"]) == (
        "10.00",
        "3.00",
        "7.00",
    )

    assert await release_expired(api.storage, now) == []
    released = await release_expired(api.storage, now + timedelta(minutes=1))
    assert [(r.brand_id, r.hold.amount) for r in released] == [(brand.id, Decimal("3.00"))]
    balance = await api.balance(brand)
    assert (balance["reserved"], balance["available"]) == ("0.00", "10.00")
    assert await holds(api, brand) == []
    assert await release_expired(api.storage, now + timedelta(minutes=2)) == []

    actions = reservation.settle_actions(["01" + "0" * 24], now)
    with pytest.raises(ConditionFailed) as caught:
        await transact(api.storage, actions)
    failure = ledger_failure(caught.value, actions)
    assert isinstance(failure, Conflict)
    assert "expired" in failure.message
    assert (await api.balance(brand))["available"] == "10.00"


async def test_release_returns_only_what_was_not_settled(sqlite_api) -> None:
    api = sqlite_api
    brand = await api.brand("FREE")
    now = api.clock()
    reservation = await FeeReservation.reserve(api.storage, brand.id, 4, Decimal("1.00"), now)
    assert reservation is not None
    await transact(api.storage, reservation.settle_actions(["01" + "1" * 24], now))
    reservation.settled(1)
    await reservation.release(api.storage)
    await reservation.release(api.storage)
    balance = await api.balance(brand)
    assert (balance["posted"], balance["reserved"], balance["available"]) == (
        "9.00",
        "0.00",
        "9.00",
    )
    assert await holds(api, brand) == []


async def test_a_reservation_beyond_the_available_credits_is_refused(sqlite_api) -> None:
    api = sqlite_api
    brand = await api.brand("FREE")
    with pytest.raises(InsufficientCredits):
        await FeeReservation.reserve(api.storage, brand.id, 11, Decimal("1.00"), api.clock())
    assert await FeeReservation.reserve(api.storage, brand.id, 11, Decimal(0), api.clock()) is None
    assert (await api.balance(brand))["version"] == 1
