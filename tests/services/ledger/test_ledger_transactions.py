"""postLedgerTransaction and reverseLedgerTransaction, and amount validation."""

from __future__ import annotations

import uuid

import pytest

from storage.access_patterns import LEDGER_TRANSACTION

POST = """mutation($input: LedgerTransactionInput!, $key: String!) {
    postLedgerTransaction(input: $input, idempotencyKey: $key) {
        id memo lines { account currency amount }
    }
}"""
REVERSE = """mutation($id: ID!, $key: String!) {
    reverseLedgerTransaction(id: $id, idempotencyKey: $key) {
        id memo lines { account amount } reverses { id reversedBy { id } } reversedBy { id }
    }
}"""
TRANSACTION = """query($id: ID!) {
    ledgerTransaction(id: $id) { id reverses { id } reversedBy { id reverses { id } } }
}"""
GRANT = """mutation($brandId: ID!, $amount: Decimal!, $key: String!) {
    grantCredits(brandId: $brandId, amount: $amount, idempotencyKey: $key) { id }
}"""


def lines(brand, amount: str, counter: str = "platform:revenue") -> list[dict[str, str]]:
    negated = amount[1:] if amount.startswith("-") else f"-{amount}"
    return [
        {"account": brand.account, "currency": "CREDIT", "amount": amount},
        {"account": counter, "currency": "CREDIT", "amount": negated},
    ]


async def post(api, brand, entries, memo: str = "adjustment") -> dict[str, object]:
    variables = {
        "input": {"brandId": brand.id, "memo": memo, "lines": entries},
        "key": uuid.uuid4().hex,
    }
    return await api.execute(POST, variables)


async def test_a_debit_moves_credits_to_revenue(api) -> None:
    brand = await api.brand()
    await api.grant(brand, "10.00")
    body = await post(api, brand, lines(brand, "-3.30"), memo="Manual fee")
    assert "errors" not in body, body
    transaction = body["data"]["postLedgerTransaction"]
    assert transaction["memo"] == "Manual fee"
    assert [line["amount"] for line in transaction["lines"]] == ["-3.30", "3.30"]
    balance = await api.balance(brand)
    assert (balance["posted"], balance["available"], balance["version"]) == ("6.70", "6.70", 2)


async def test_a_debit_beyond_the_available_credits_writes_nothing(api) -> None:
    brand = await api.brand()
    await api.grant(brand, "1.00")
    body = await post(api, brand, lines(brand, "-1.01"))
    assert api.codes(body) == ["INSUFFICIENT_CREDITS"]
    assert "1.01" in body["errors"][0]["message"]
    balance = await api.balance(brand)
    assert (balance["posted"], balance["version"]) == ("1.00", 1)
    exact = await post(api, brand, lines(brand, "-1.00"))
    assert "errors" not in exact
    assert (await api.balance(brand))["available"] == "0.00"


@pytest.mark.parametrize(
    ("entries", "problem"),
    [
        (lambda b, o: lines(b, "-1.00")[:1], "at least two lines"),
        (
            lambda b, o: [*lines(b, "-1.00")[:1], {**lines(b, "-1.00")[1], "amount": "0.99"}],
            "sum to zero",
        ),
        (lambda b, o: lines(o, "1.00", "platform:grants"), "other than"),
        (
            lambda b, o: [
                *lines(b, "-1.00")[:1],
                {**lines(b, "-1.00")[0], "account": o.account, "amount": "1.00"},
            ],
            "exactly one brand",
        ),
        (lambda b, o: lines(b, "-1.00", "platform:nowhere"), "Unknown ledger account"),
        (
            lambda b, o: [{**line, "currency": "EUR"} for line in lines(b, "-1.00")],
            "Unknown currency",
        ),
        (lambda b, o: lines(b, "0.00"), "must not be zero"),
        (lambda b, o: [*lines(b, "-1.00"), lines(b, "-1.00")[0]], "appears twice"),
    ],
)
async def test_malformed_transactions_are_refused(sqlite_api, entries, problem) -> None:
    api = sqlite_api
    brand, other = await api.brand(), await api.brand()
    await api.grant(brand, "5.00")
    body = await post(api, brand, entries(brand, other))
    assert api.codes(body) == ["BAD_USER_INPUT"]
    assert problem in body["errors"][0]["message"]
    assert (await api.balance(brand))["version"] == 1


@pytest.mark.parametrize(
    "amount",
    [
        "1.005",
        "0.001",
        "NaN",
        "-NaN",
        "sNaN",
        "Infinity",
        "-Infinity",
        "inf",
        "1e15",
        "1E+400",
        "1E-400",
        "1_000",
        "",
        " 1",
        "\u0661",  # ARABIC-INDIC DIGIT ONE: Decimal() would read it as 1
        "0x10",
    ],
)
async def test_amounts_that_are_not_exact_credits_are_bad_input(sqlite_api, amount) -> None:
    api = sqlite_api
    brand = await api.brand()
    body = await api.execute(
        GRANT, {"brandId": brand.id, "amount": amount, "key": uuid.uuid4().hex}
    )
    assert api.codes(body) == ["BAD_USER_INPUT"], body
    entries = lines(brand, "1.00", "platform:grants")
    entries[0]["amount"] = amount
    body = await post(api, brand, entries)
    assert api.codes(body) == ["BAD_USER_INPUT"], body
    assert (await api.balance(brand))["version"] == 0


@pytest.mark.parametrize("amount", [1.5, 1, True, None])
async def test_amounts_must_be_strings(sqlite_api, amount) -> None:
    api = sqlite_api
    brand = await api.brand()
    body = await api.execute(
        GRANT, {"brandId": brand.id, "amount": amount, "key": uuid.uuid4().hex}
    )
    assert api.codes(body) == ["BAD_USER_INPUT"]


@pytest.mark.parametrize(("amount", "stored"), [("1", "1.00"), ("1.5", "1.50"), ("2.000", "2.00")])
async def test_exact_spellings_are_accepted_at_scale(sqlite_api, amount, stored) -> None:
    api = sqlite_api
    brand = await api.brand()
    body = await api.execute(
        GRANT, {"brandId": brand.id, "amount": amount, "key": uuid.uuid4().hex}
    )
    assert "errors" not in body, body
    assert (await api.balance(brand))["posted"] == stored


async def test_negative_and_zero_grants_are_refused(api) -> None:
    brand = await api.brand()
    for amount in ("0", "-1.00"):
        body = await api.execute(
            GRANT, {"brandId": brand.id, "amount": amount, "key": uuid.uuid4().hex}
        )
        assert api.codes(body) == ["BAD_USER_INPUT"]


async def test_a_reversal_negates_the_original_and_links_both_ways(api) -> None:
    brand = await api.brand()
    await api.grant(brand, "5.00")
    original = (await post(api, brand, lines(brand, "-2.00")))["data"]["postLedgerTransaction"]
    data = await api.data(REVERSE, {"id": original["id"], "key": uuid.uuid4().hex})
    reversal = data["reverseLedgerTransaction"]
    assert [line["amount"] for line in reversal["lines"]] == ["2.00", "-2.00"]
    assert reversal["reverses"] == {"id": original["id"], "reversedBy": {"id": reversal["id"]}}
    assert reversal["reversedBy"] is None
    assert reversal["memo"] == f"Reversal of {original['id']}"
    looked_up = await api.data(TRANSACTION, {"id": original["id"]}, as_=brand.principal)
    assert looked_up["ledgerTransaction"]["reversedBy"] == {
        "id": reversal["id"],
        "reverses": {"id": original["id"]},
    }
    balance = await api.balance(brand)
    assert (balance["posted"], balance["available"], balance["version"]) == ("5.00", "5.00", 3)


async def test_reversing_twice_or_reversing_a_reversal_is_a_conflict(api) -> None:
    brand = await api.brand()
    original = await api.grant(brand, "5.00")
    reversal = await api.data(REVERSE, {"id": original["id"], "key": uuid.uuid4().hex})
    twice = await api.execute(REVERSE, {"id": original["id"], "key": uuid.uuid4().hex})
    assert api.codes(twice) == ["CONFLICT"]
    back = await api.execute(
        REVERSE, {"id": reversal["reverseLedgerTransaction"]["id"], "key": uuid.uuid4().hex}
    )
    assert api.codes(back) == ["CONFLICT"]
    assert (await api.balance(brand))["version"] == 2


async def test_a_reversal_that_would_overdraw_is_refused(api) -> None:
    brand = await api.brand()
    grant = await api.grant(brand, "5.00")
    await post(api, brand, lines(brand, "-4.00"))
    body = await api.execute(REVERSE, {"id": grant["id"], "key": uuid.uuid4().hex})
    assert api.codes(body) == ["INSUFFICIENT_CREDITS"]
    item = await api.storage.get(LEDGER_TRANSACTION, transaction_id=grant["id"])
    assert item is not None and "reversedBy" not in item
    assert (await api.balance(brand))["available"] == "1.00"


async def test_reversing_needs_the_operator_and_an_existing_transaction(api) -> None:
    brand = await api.brand()
    grant = await api.grant(brand, "1.00")
    body = await api.execute(REVERSE, {"id": grant["id"], "key": "k"}, as_=brand.principal)
    assert api.codes(body) == ["FORBIDDEN"]
    body = await api.execute(REVERSE, {"id": "ltx_" + "f" * 32, "key": "k"})
    assert api.codes(body) == ["NOT_FOUND"]
    body = await api.execute(REVERSE, {"id": "nope", "key": "k"})
    assert api.codes(body) == ["BAD_USER_INPUT"]
