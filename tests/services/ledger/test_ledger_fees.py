"""Registration fees and plan grants, in the transactions that register."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from decimal import Decimal

import pytest

from storage.access_patterns import BRAND_STATS, LEDGER_TRANSACTION

STATEMENT = """query($id: ID!) {
    brand(id: $id) {
        stats { productCount }
        products(first: 100) { edges { node { id } } }
        ledger { statement(first: 100) { edges { node { transactionId amount
            transaction { memo lines { account amount } } } } } }
    }
}"""


async def brand_view(api, brand) -> dict[str, object]:
    data = await api.data(STATEMENT, {"id": brand.id}, as_=brand.principal)
    view: dict[str, object] = data["brand"]
    return view


async def test_a_free_brand_is_granted_ten_credits_at_registration(api) -> None:
    free, pro = await api.brand("FREE"), await api.brand("PRO")
    assert await api.balance(free) == {
        "currency": "CREDIT",
        "posted": "10.00",
        "reserved": "0.00",
        "available": "10.00",
        "version": 1,
    }
    assert (await api.balance(pro))["version"] == 0
    view = await brand_view(api, free)
    (posting,) = [edge["node"] for edge in view["ledger"]["statement"]["edges"]]
    assert posting["amount"] == "10.00"
    assert posting["transaction"]["lines"] == [
        {"account": "platform:grants", "amount": "-10.00"},
        {"account": free.account, "amount": "10.00"},
    ]


async def test_register_product_charges_the_fee_in_the_same_transaction(api) -> None:
    brand = await api.brand("FREE")
    body = await api.register_product(brand)
    assert "errors" not in body, body
    product_id = body["data"]["registerProduct"]["id"]
    balance = await api.balance(brand)
    assert (balance["posted"], balance["available"], balance["version"]) == ("9.00", "9.00", 2)
    view = await brand_view(api, brand)
    fee = view["ledger"]["statement"]["edges"][1]["node"]
    assert fee["amount"] == "-1.00"
    assert fee["transaction"]["memo"] == "Registration fee"
    assert fee["transaction"]["lines"] == [
        {"account": brand.account, "amount": "-1.00"},
        {"account": "platform:revenue", "amount": "1.00"},
    ]
    item = await api.storage.get(LEDGER_TRANSACTION, transaction_id=fee["transactionId"])
    assert item["refs"] == [product_id]


async def test_without_credits_registration_writes_nothing(api) -> None:
    brand = await api.brand("PRO")
    body = await api.register_product(brand, name="Unpaid")
    assert api.codes(body) == ["INSUFFICIENT_CREDITS"]
    assert body["data"] is None
    view = await brand_view(api, brand)
    assert view["stats"] == {"productCount": 0}
    assert view["products"]["edges"] == []
    assert view["ledger"]["statement"]["edges"] == []
    await api.grant(brand, "1.00")
    again = await api.register_product(brand, name="Unpaid")
    assert "errors" not in again, "the refused registration must not have claimed the name"


@pytest.fixture
def fee(sqlite_api) -> Iterator[Callable[[str], None]]:
    services = sqlite_api.services
    default = services.registration_fee

    def set_fee(amount: str) -> None:
        services.registration_fee = Decimal(amount)

    yield set_fee
    services.registration_fee = default


async def test_the_fee_is_a_setting(sqlite_api, fee) -> None:
    api = sqlite_api
    brand = await api.brand("FREE")
    fee("2.50")
    for _ in range(4):
        assert "errors" not in await api.register_product(brand)
    body = await api.register_product(brand)
    assert api.codes(body) == ["INSUFFICIENT_CREDITS"]
    assert "2.50" in body["errors"][0]["message"]
    assert (await api.balance(brand))["available"] == "0.00"


async def test_a_free_registration_posts_nothing(sqlite_api, fee) -> None:
    api = sqlite_api
    brand = await api.brand("PRO")
    fee("0")
    assert "errors" not in await api.register_product(brand)
    assert (await api.balance(brand))["version"] == 0


async def test_concurrent_registrations_never_overdraw(api, serialized_moto) -> None:
    brand = await api.brand("FREE")
    bodies = await asyncio.gather(*(api.register_product(brand) for _ in range(14)))
    codes = sorted(code for body in bodies for code in api.codes(body))
    assert codes == ["INSUFFICIENT_CREDITS"] * 4
    registered = [body for body in bodies if "errors" not in body]
    assert len(registered) == 10
    balance = await api.balance(brand)
    assert (balance["posted"], balance["reserved"], balance["available"]) == (
        "0.00",
        "0.00",
        "0.00",
    )
    assert balance["version"] == 11
    stats = await api.storage.get(BRAND_STATS, brand_id=brand.id)
    assert stats["productCount"] == 10
    view = await brand_view(api, brand)
    assert len(view["products"]["edges"]) == 10
    assert len(view["ledger"]["statement"]["edges"]) == 11
