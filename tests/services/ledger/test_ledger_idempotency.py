"""idempotencyKey on the ledger mutations: retries, conflicting reuse,
concurrent first use, and a retry after the record expired."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta

from services.idempotency import IDEMPOTENCY_TTL

GRANT = """mutation($brandId: ID!, $amount: Decimal!, $key: String!, $memo: String) {
    grantCredits(brandId: $brandId, amount: $amount, idempotencyKey: $key, memo: $memo) { id }
}"""
POST = """mutation($input: LedgerTransactionInput!, $key: String!) {
    postLedgerTransaction(input: $input, idempotencyKey: $key) { id }
}"""
REVERSE = """mutation($id: ID!, $key: String!) {
    reverseLedgerTransaction(id: $id, idempotencyKey: $key) { id }
}"""


def grant(brand, amount: str, key: str, memo: str | None = None) -> dict[str, object]:
    return {"brandId": brand.id, "amount": amount, "key": key, "memo": memo}


async def test_a_retry_returns_the_first_result_and_posts_once(api) -> None:
    brand = await api.brand()
    key = uuid.uuid4().hex
    first = await api.data(GRANT, grant(brand, "5.00", key))
    retry = await api.data(GRANT, grant(brand, "5", key))
    assert retry == first
    balance = await api.balance(brand)
    assert (balance["posted"], balance["version"]) == ("5.00", 1)


async def test_the_same_key_with_another_body_is_a_conflict(api) -> None:
    brand, other = await api.brand(), await api.brand()
    key = uuid.uuid4().hex
    await api.data(GRANT, grant(brand, "5.00", key))
    for changed in (
        grant(brand, "5.01", key),
        grant(brand, "5.00", key, memo="another memo"),
        grant(other, "5.00", key),
    ):
        body = await api.execute(GRANT, changed)
        assert api.codes(body) == ["CONFLICT"]
    posting = {
        "brandId": brand.id,
        "memo": "m",
        "lines": [
            {"account": brand.account, "currency": "CREDIT", "amount": "-1.00"},
            {"account": "platform:revenue", "currency": "CREDIT", "amount": "1.00"},
        ],
    }
    body = await api.execute(POST, {"input": posting, "key": key})
    assert api.codes(body) == ["CONFLICT"]
    assert (await api.balance(brand))["posted"] == "5.00"
    assert (await api.balance(other))["posted"] == "0.00"


async def test_concurrent_first_use_of_one_key_posts_one_transaction(api, serialized_moto) -> None:
    brand = await api.brand()
    key = uuid.uuid4().hex
    bodies = await asyncio.gather(
        *(api.execute(GRANT, grant(brand, "2.00", key)) for _ in range(6))
    )
    assert all("errors" not in body for body in bodies), bodies
    assert len({body["data"]["grantCredits"]["id"] for body in bodies}) == 1
    balance = await api.balance(brand)
    assert (balance["posted"], balance["version"]) == ("2.00", 1)


async def test_concurrent_first_use_with_different_bodies_lets_one_win(
    api, serialized_moto
) -> None:
    brand = await api.brand()
    key = uuid.uuid4().hex
    amounts = ["1.00", "2.00", "3.00", "4.00"]
    bodies = await asyncio.gather(*(api.execute(GRANT, grant(brand, a, key)) for a in amounts))
    winners = [a for a, body in zip(amounts, bodies, strict=True) if "errors" not in body]
    assert len(winners) == 1
    assert sorted(code for body in bodies for code in api.codes(body)) == ["CONFLICT"] * 3
    assert (await api.balance(brand))["posted"] == winners[0]


async def test_a_retry_after_the_record_expired_still_posts_once(sqlite_api) -> None:
    api = sqlite_api
    brand = await api.brand()
    key = uuid.uuid4().hex
    first = await api.data(GRANT, grant(brand, "5.00", key))
    api.clock.advance(IDEMPOTENCY_TTL + timedelta(seconds=1))
    retry = await api.data(GRANT, grant(brand, "5.00", key))
    assert retry == first
    changed = await api.execute(GRANT, grant(brand, "6.00", key))
    assert api.codes(changed) == ["CONFLICT"]
    assert (await api.balance(brand))["posted"] == "5.00"


async def test_keys_are_required_and_validated(api) -> None:
    brand = await api.brand()
    missing = await api.execute(
        'mutation($b: ID!) { grantCredits(brandId: $b, amount: "1") { id } }', {"b": brand.id}
    )
    assert api.codes(missing) == ["BAD_USER_INPUT"]
    for bad in ("", "has space", "x" * 129):
        body = await api.execute(GRANT, grant(brand, "1.00", bad))
        assert api.codes(body) == ["BAD_USER_INPUT"], bad
    assert (await api.balance(brand))["version"] == 0


async def test_reversal_retries_return_the_reversal(api) -> None:
    brand = await api.brand()
    original = await api.grant(brand, "4.00")
    key = uuid.uuid4().hex
    first = await api.data(REVERSE, {"id": original["id"], "key": key})
    assert await api.data(REVERSE, {"id": original["id"], "key": key}) == first
    again = await api.execute(REVERSE, {"id": original["id"], "key": uuid.uuid4().hex})
    assert api.codes(again) == ["CONFLICT"]
    balance = await api.balance(brand)
    assert (balance["posted"], balance["version"]) == ("0.00", 2)
