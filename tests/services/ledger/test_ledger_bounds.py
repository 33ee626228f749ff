"""Amounts and balances stay inside the ledger's range, and amounts are
spelled in plain decimal notation; what breaks either is refused before
anything is written."""

from __future__ import annotations

import uuid

import pytest
from test_ledger_transactions import GRANT, lines, post

from services.reconcile import reconcile

LARGEST = "999999999999999.99"


async def test_a_grant_that_would_overflow_the_balance_is_refused(api) -> None:
    brand = await api.brand()
    await api.grant(brand, "10.00")
    before = await api.balance_item(brand)

    body = await api.execute(GRANT, {"brandId": brand.id, "amount": LARGEST, "key": "k1"})

    assert api.codes(body) == ["BAD_USER_INPUT"]
    assert "999999999999999.99" in body["errors"][0]["message"]
    assert await api.balance_item(brand) == before
    assert (await api.balance(brand))["available"] == "10.00"


async def test_the_largest_balance_is_reachable_and_readable(api) -> None:
    brand = await api.brand()
    await api.grant(brand, "999999999999990.00")
    await api.grant(brand, "9.99")

    assert (await api.balance(brand))["available"] == LARGEST
    body = await api.execute(GRANT, {"brandId": brand.id, "amount": "0.01", "key": "k2"})
    assert api.codes(body) == ["BAD_USER_INPUT"]


async def test_a_posting_that_would_overflow_the_balance_is_refused(api) -> None:
    brand = await api.brand()
    await api.grant(brand, "10.00")

    body = await post(api, brand, lines(brand, LARGEST, counter="platform:grants"))

    assert api.codes(body) == ["BAD_USER_INPUT"]
    assert (await api.balance(brand))["posted"] == "10.00"


async def test_a_refused_grant_leaves_the_store_reconcilable(fresh_api) -> None:
    brand = await fresh_api.brand()
    await fresh_api.grant(brand, "10.00")
    await fresh_api.execute(GRANT, {"brandId": brand.id, "amount": LARGEST, "key": "k3"})

    report = await reconcile(fresh_api.storage, fresh_api.services.key_ring, fresh_api.clock())

    assert report.ok, report


@pytest.mark.parametrize("amount", ["1e-2", "1E+2", "1e2", "+5", "+5.00", "5.", ".5", " 5"])
async def test_amounts_in_other_spellings_are_refused(api, amount: str) -> None:
    brand = await api.brand()

    body = await api.execute(
        GRANT, {"brandId": brand.id, "amount": amount, "key": uuid.uuid4().hex}
    )

    assert api.codes(body) == ["BAD_USER_INPUT"]
    assert "hint" in body["errors"][0]["extensions"]
    assert await api.balance_item(brand) is None
