"""grantCredits: balances, postings, statements, transactions."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from storage.access_patterns import LEDGER_BALANCE

STATEMENT = """query($id: ID!, $month: String, $first: Int, $after: String) {
    brand(id: $id) { ledger {
        statement(month: $month, first: $first, after: $after) {
            edges { cursor node { transactionId line account currency amount postedAt
                                  transaction { id memo } } }
            pageInfo { hasNextPage endCursor }
        }
    } }
}"""
BALANCE_QUERY = "query($id: ID!) { brand(id: $id) { ledger { balance { available } } } }"
GRANT = """mutation($brandId: ID!, $amount: Decimal!, $key: String!) {
    grantCredits(brandId: $brandId, amount: $amount, idempotencyKey: $key) { id }
}"""
TRANSACTION = """query($id: ID!) {
    ledgerTransaction(id: $id) { id memo createdAt lines { account currency amount }
                                 reverses { id } reversedBy { id } }
}"""


async def test_grant_credits_posts_and_updates_the_balance(api) -> None:
    brand = await api.brand()
    transaction = await api.grant(brand, "12.5")
    assert transaction["lines"] == [
        {"account": "platform:grants", "currency": "CREDIT", "amount": "-12.50"},
        {"account": brand.account, "currency": "CREDIT", "amount": "12.50"},
    ]
    assert transaction["id"].startswith("ltx_")
    assert await api.balance(brand) == {
        "currency": "CREDIT",
        "posted": "12.50",
        "reserved": "0.00",
        "available": "12.50",
        "version": 1,
    }
    second = await api.grant(brand, "0.25")
    balance = await api.balance(brand)
    assert (balance["posted"], balance["available"], balance["version"]) == ("12.75", "12.75", 2)

    data = await api.data(STATEMENT, {"id": brand.id}, as_=brand.principal)
    nodes = [edge["node"] for edge in data["brand"]["ledger"]["statement"]["edges"]]
    assert [(n["transactionId"], n["line"], n["amount"]) for n in nodes] == [
        (transaction["id"], 1, "12.50"),
        (second["id"], 1, "0.25"),
    ]
    assert {n["account"] for n in nodes} == {brand.account}
    assert nodes[0]["postedAt"] == transaction["createdAt"]
    assert nodes[0]["transaction"] == {"id": transaction["id"], "memo": "Credit grant"}


async def test_stored_amounts_are_numbers_never_floats(api) -> None:
    brand = await api.brand()
    await api.grant(brand, "0.10")
    await api.grant(brand, "0.20")
    item = await api.balance_item(brand)
    assert item is not None
    assert item["posted"] == Decimal("0.3") and not isinstance(item["posted"], float)
    assert (await api.balance(brand))["available"] == "0.30"


async def test_balance_of_a_brand_without_credits_is_zero(api) -> None:
    brand = await api.brand()
    data = await api.data(
        """query($id: ID!) {
            brand(id: $id) { ledger { balances { currency posted available version } } }
        }""",
        {"id": brand.id},
        as_=brand.principal,
    )
    assert data["brand"]["ledger"]["balances"] == [
        {"currency": "CREDIT", "posted": "0.00", "available": "0.00", "version": 0}
    ]


async def test_statement_pages_within_a_month(api) -> None:
    brand = await api.brand()
    ids = [(await api.grant(brand, f"{n}.00"))["id"] for n in range(1, 6)]
    seen: list[str] = []
    after = None
    while True:
        data = await api.data(
            STATEMENT, {"id": brand.id, "first": 2, "after": after}, as_=brand.principal
        )
        statement = data["brand"]["ledger"]["statement"]
        seen.extend(edge["node"]["transactionId"] for edge in statement["edges"])
        if not statement["pageInfo"]["hasNextPage"]:
            break
        after = statement["pageInfo"]["endCursor"]
    assert seen == ids


async def test_statement_is_per_month(api) -> None:
    brand = await api.brand()
    api.clock.pinned = datetime(2031, 1, 31, 23, 59, 59, tzinfo=UTC)
    january = await api.grant(brand, "1.00")
    api.clock.pinned = datetime(2031, 2, 1, 0, 0, tzinfo=UTC)
    february = await api.grant(brand, "2.00")

    async def month(value: str | None) -> list[str]:
        data = await api.data(STATEMENT, {"id": brand.id, "month": value}, as_=brand.principal)
        edges = data["brand"]["ledger"]["statement"]["edges"]
        return [edge["node"]["transactionId"] for edge in edges]

    assert await month("2031-01") == [january["id"]]
    assert await month("2031-02") == [february["id"]]
    assert await month(None) == [february["id"]]
    assert await month("2030-12") == []
    body = await api.execute(STATEMENT, {"id": brand.id, "month": "2031-13"}, as_=brand.principal)
    assert api.codes(body) == ["BAD_USER_INPUT"]


async def test_ledger_transaction_is_visible_to_its_brand_only(api) -> None:
    brand, other = await api.brand(), await api.brand()
    transaction = await api.grant(brand, "3.00")
    data = await api.data(TRANSACTION, {"id": transaction["id"]}, as_=brand.principal)
    assert data["ledgerTransaction"]["lines"] == transaction["lines"]
    assert sum(Decimal(line["amount"]) for line in transaction["lines"]) == 0
    assert data["ledgerTransaction"]["reverses"] is None
    for outsider in (other.principal, brand.partner):
        body = await api.execute(TRANSACTION, {"id": transaction["id"]}, as_=outsider)
        assert api.codes(body) == ["NOT_FOUND"]
        assert body["data"]["ledgerTransaction"] is None
    missing = await api.execute(TRANSACTION, {"id": "ltx_" + "0" * 32}, as_=brand.principal)
    assert api.codes(missing) == ["NOT_FOUND"]
    malformed = await api.execute(TRANSACTION, {"id": "LTXN#x"}, as_=brand.principal)
    assert api.codes(malformed) == ["BAD_USER_INPUT"]


async def test_only_the_brand_key_and_the_operator_read_a_ledger(api) -> None:
    brand, other = await api.brand(), await api.brand()
    partner = await api.execute(
        "query($id: ID!) { brand(id: $id) { id ledger { balance { available } } } }",
        {"id": brand.id},
        as_=brand.partner,
    )
    assert api.codes(partner) == ["FORBIDDEN"]
    assert partner["data"]["brand"] == {"id": brand.id, "ledger": None}
    foreign = await api.execute(BALANCE_QUERY, {"id": brand.id}, as_=other.principal)
    assert api.codes(foreign) == ["NOT_FOUND"]
    admin = await api.data(BALANCE_QUERY, {"id": brand.id})
    assert admin["brand"]["ledger"]["balance"]["available"] == "0.00"


async def test_grant_needs_the_operator_and_an_existing_brand(api) -> None:
    brand = await api.brand()
    variables = {"brandId": brand.id, "amount": "1", "key": "k"}
    body = await api.execute(GRANT, variables, as_=brand.principal)
    assert api.codes(body) == ["FORBIDDEN"]
    missing = "01" + "0" * 24
    body = await api.execute(GRANT, {**variables, "brandId": missing})
    assert api.codes(body) == ["NOT_FOUND"]
    assert await api.storage.get(LEDGER_BALANCE, brand_id=missing, currency="CREDIT") is None
