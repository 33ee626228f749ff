"""Property: any sequence of grants, charges, debits, batch reservations and
reversals, run through the real commands and store, keeps the balance equal
to the sum of the postings, never negative, with nothing left reserved."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from domain.errors import ConditionFailed, Conflict, InsufficientCredits
from domain.identifiers import new_id
from domain.ledger import LedgerLine
from services.ledger import FeeReservation, charge_actions, ledger_failure
from services.ledger.commands import (
    grant_credits,
    post_transaction,
    reverse_transaction,
)
from services.transact import transact
from storage.access_patterns import LEDGER_BALANCE, LEDGER_STATEMENT

FEE = Decimal("1.00")
CENTS = st.integers(min_value=1, max_value=2000).map(lambda c: Decimal(c).scaleb(-2))


@dataclass(frozen=True)
class Grant:
    amount: Decimal


@dataclass(frozen=True)
class Charge:
    products: int


@dataclass(frozen=True)
class Debit:
    amount: Decimal


@dataclass(frozen=True)
class Batch:
    products: int
    settled: int


@dataclass(frozen=True)
class Reverse:
    pick: int


OPERATIONS = st.one_of(
    st.builds(Grant, CENTS),
    st.builds(Charge, st.integers(1, 4)),
    st.builds(Debit, CENTS),
    st.integers(1, 6).flatmap(lambda n: st.builds(Batch, st.just(n), st.integers(0, n))),
    st.builds(Reverse, st.integers(0, 100)),
)


@dataclass
class Posted:
    id: str
    delta: Decimal
    reversible: bool


async def apply(api, brand, operation, history: list[Posted]) -> Decimal:
    """Runs one operation; returns what it should add to the balance (0 when refused)."""
    context = api.context()
    now = api.clock()
    match operation:
        case Grant(amount):
            item = await grant_credits(
                context,
                brand_id=brand.id,
                amount=amount,
                memo=None,
                idempotency_key=uuid.uuid4().hex,
            )
            history.append(Posted(item["id"], amount, True))
            return amount
        case Debit(amount):
            lines = [
                LedgerLine(brand.account, "CREDIT", -amount),
                LedgerLine("platform:revenue", "CREDIT", amount),
            ]
            try:
                item = await post_transaction(
                    context,
                    brand_id=brand.id,
                    memo="debit",
                    lines=lines,
                    idempotency_key=uuid.uuid4().hex,
                )
            except InsufficientCredits:
                return Decimal(0)
            history.append(Posted(item["id"], -amount, True))
            return -amount
        case Charge(products):
            actions = charge_actions(brand.id, [new_id(now) for _ in range(products)], now, FEE)
            try:
                await transact(api.storage, actions)
            except ConditionFailed as error:
                assert isinstance(ledger_failure(error, actions), InsufficientCredits)
                return Decimal(0)
            return -FEE * products
        case Batch(products, settled):
            try:
                reservation = await FeeReservation.reserve(
                    api.storage, brand.id, products, FEE, now
                )
            except InsufficientCredits:
                return Decimal(0)
            assert reservation is not None
            for _ in range(settled):
                await transact(api.storage, reservation.settle_actions([new_id(now)], now))
                reservation.settled(1)
            await reservation.release(api.storage)
            return -FEE * settled
        case Reverse(pick):
            if not history:
                return Decimal(0)
            original = history[pick % len(history)]
            try:
                await reverse_transaction(
                    context, transaction_id=original.id, idempotency_key=uuid.uuid4().hex
                )
            except InsufficientCredits:
                assert original.delta > 0
                return Decimal(0)
            except Conflict:
                assert not original.reversible
                return Decimal(0)
            assert original.reversible
            history[pick % len(history)] = Posted(original.id, original.delta, False)
            return -original.delta
    raise AssertionError(operation)


async def stored(api, brand) -> tuple[Decimal, Decimal, Decimal, Decimal]:
    """posted, reserved, available, and the sum of the month's postings."""
    item = await api.storage.get(LEDGER_BALANCE, brand_id=brand.id, currency="CREDIT") or {}
    page = await api.storage.query(
        LEDGER_STATEMENT, {"brand_id": brand.id, "month": "2031-05"}, tenant="test", first=100
    )
    assert not page.has_next_page
    postings = sum((Decimal(p["amount"]) for p in page.items), Decimal(0))
    return (
        Decimal(item.get("posted", 0)),
        Decimal(item.get("reserved", 0)),
        Decimal(item.get("available", 0)),
        postings,
    )


@settings(max_examples=30, deadline=None)
@given(operations=st.lists(OPERATIONS, min_size=1, max_size=10))
async def test_balance_is_the_sum_of_postings_and_never_negative(sqlite_api, operations) -> None:
    api = sqlite_api
    api.clock.pinned = datetime(2031, 5, 17, 9, 30, tzinfo=UTC)
    brand = await api.brand("PRO")
    expected = Decimal(0)
    history: list[Posted] = []
    for operation in operations:
        expected += await apply(api, brand, operation, history)
        posted, reserved, available, postings = await stored(api, brand)
        assert posted == postings == expected, operation
        assert reserved == 0
        assert available == posted >= 0
