from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from domain.errors import BadUserInput, Conflict, InsufficientCredits, ProofgateError
from domain.ledger import (
    CREDIT,
    Balance,
    BalanceDelta,
    LedgerLine,
    LedgerTransaction,
    amount_max,
    brand_account,
    build_transaction,
    can_reverse,
    grant_lines,
    registration_fee_lines,
    release_delta,
    reservation_delta,
    reversal_of,
    transaction_deltas,
    transaction_id,
)

T0 = datetime(2026, 3, 10, tzinfo=UTC)
BRAND = "brd_1"
D = Decimal


def post(lines: tuple[LedgerLine, ...], seed: str = "1") -> LedgerTransaction:
    return build_transaction(id=transaction_id("test", seed), memo="", created_at=T0, lines=lines)


def test_grant_delta_raises_posted_and_available_unconditionally() -> None:
    (delta,) = transaction_deltas(post(grant_lines(BRAND, D("10"))))
    assert delta == BalanceDelta(BRAND, CREDIT, D("10.00"), D(0))
    assert delta.available == D("10.00")
    assert delta.account == brand_account(BRAND)


def test_charge_delta_requires_available() -> None:
    (delta,) = transaction_deltas(post(registration_fee_lines(BRAND, D("1"))))
    assert (delta.posted, delta.reserved, delta.available) == (D("-1.00"), D(0), D("-1.00"))
    assert (delta.min_available, delta.min_reserved) == (D("1.00"), None)


def test_settling_from_a_reservation_leaves_available_alone() -> None:
    charge = post(registration_fee_lines(BRAND, D("1"), count=3))
    (delta,) = transaction_deltas(charge, settle_reserved=True)
    assert (delta.posted, delta.reserved, delta.available) == (D("-3.00"), D("-3.00"), D(0))
    assert (delta.min_available, delta.min_reserved) == (None, D("3.00"))


def test_deltas_cover_every_brand_line_and_skip_platform_accounts() -> None:
    lines = (
        LedgerLine(brand_account("a"), CREDIT, D("-2")),
        LedgerLine(brand_account("b"), CREDIT, D("1.5")),
        LedgerLine("platform:revenue", CREDIT, D("0.5")),
    )
    deltas = transaction_deltas(post(lines))
    assert [(d.brand_id, d.posted) for d in deltas] == [("a", D("-2.00")), ("b", D("1.50"))]


def test_reservation_and_release() -> None:
    reserve = reservation_delta(BRAND, CREDIT, D("5"))
    assert (reserve.posted, reserve.reserved, reserve.available) == (D(0), D("5.00"), D("-5.00"))
    assert reserve.min_available == D("5.00")
    release = release_delta(BRAND, CREDIT, D("2"))
    assert (release.posted, release.reserved, release.available) == (D(0), D("-2.00"), D("2.00"))
    assert release.min_reserved == D("2.00")


@pytest.mark.parametrize("amount", [D(0), D("-1"), D("0.001")])
def test_reservation_amounts_must_be_positive_and_exact(amount: Decimal) -> None:
    with pytest.raises(BadUserInput):
        reservation_delta(BRAND, CREDIT, amount)
    with pytest.raises(BadUserInput):
        release_delta(BRAND, CREDIT, amount)


def test_apply_refuses_what_the_store_condition_would() -> None:
    funded = Balance.zero(CREDIT).apply(transaction_deltas(post(grant_lines(BRAND, D("1"))))[0])
    assert funded == Balance(CREDIT, D("1.00"), D("0.00"), D("1.00"), 1)
    (charge,) = transaction_deltas(post(registration_fee_lines(BRAND, D("1.01"))))
    with pytest.raises(InsufficientCredits):
        funded.apply(charge)
    with pytest.raises(Conflict):
        funded.apply(release_delta(BRAND, CREDIT, D("0.01")))
    with pytest.raises(ProofgateError):
        funded.apply(BalanceDelta(BRAND, "USD", D(1), D(0)))


def test_balance_refuses_an_inconsistent_available() -> None:
    with pytest.raises(ProofgateError):
        Balance(CREDIT, D("5"), D("1"), D("5"), 0)


AMOUNTS = st.decimals(min_value=D("0.01"), max_value=D("30"), places=2)


class LedgerMachine(RuleBasedStateMachine):
    """Random grants, charges, reservations, settlements, releases and reversals
    applied only through the domain functions, against a model of postings."""

    def __init__(self) -> None:
        super().__init__()
        self.balance = Balance.zero(CREDIT)
        self.transactions: list[LedgerTransaction] = []
        self.reversed_by: dict[str, str] = {}
        self.applied = 0
        self.seed = 0

    def _attempt(self, deltas: tuple[BalanceDelta, ...]) -> bool:
        """Apply all deltas or none, as one conditional transaction would."""
        balance = self.balance
        try:
            for delta in deltas:
                balance = balance.apply(delta)
        except (InsufficientCredits, Conflict):
            return False
        self.balance = balance
        self.applied += len(deltas)
        return True

    def _post(self, lines: tuple[LedgerLine, ...], *, settle: bool = False) -> bool:
        self.seed += 1
        transaction = post(lines, str(self.seed))
        if not self._attempt(transaction_deltas(transaction, settle_reserved=settle)):
            return False
        self.transactions.append(transaction)
        return True

    @rule(amount=AMOUNTS)
    def grant(self, amount: Decimal) -> None:
        assert self._post(grant_lines(BRAND, amount))

    @rule(amount=AMOUNTS, count=st.integers(1, 3))
    def charge(self, amount: Decimal, count: int) -> None:
        enough = self.balance.available >= amount * count
        assert self._post(registration_fee_lines(BRAND, amount, count=count)) is enough

    @rule(amount=AMOUNTS)
    def reserve(self, amount: Decimal) -> None:
        enough = self.balance.available >= amount
        assert self._attempt((reservation_delta(BRAND, CREDIT, amount),)) is enough

    @rule(amount=AMOUNTS)
    def settle(self, amount: Decimal) -> None:
        covered = self.balance.reserved >= amount
        lines = registration_fee_lines(BRAND, amount)
        assert self._post(lines, settle=True) is covered

    @rule(amount=AMOUNTS)
    def release(self, amount: Decimal) -> None:
        covered = self.balance.reserved >= amount
        assert self._attempt((release_delta(BRAND, CREDIT, amount),)) is covered

    @precondition(lambda self: bool(self.transactions))
    @rule(data=st.data())
    def reverse(self, data: st.DataObject) -> None:
        original = data.draw(st.sampled_from(self.transactions))
        reversed_by = self.reversed_by.get(original.id)
        if not can_reverse(original, reversed_by):
            with pytest.raises(Conflict):
                reversal_of(original, created_at=T0, reversed_by=reversed_by)
            return
        reversal = reversal_of(original, created_at=T0)
        (delta,) = transaction_deltas(reversal)
        enough = delta.min_available is None or self.balance.available >= delta.min_available
        assert self._attempt((delta,)) is enough
        if enough:
            self.transactions.append(reversal)
            self.reversed_by[original.id] = reversal.id

    @invariant()
    def posted_equals_the_sum_of_brand_postings(self) -> None:
        account = brand_account(BRAND)
        postings = [
            line.amount
            for transaction in self.transactions
            for line in transaction.lines
            if line.account == account
        ]
        assert self.balance.posted == sum(postings, D(0))

    @invariant()
    def every_transaction_balances(self) -> None:
        assert sum((ln.amount for t in self.transactions for ln in t.lines), D(0)) == 0

    @invariant()
    def never_below_zero(self) -> None:
        assert self.balance.available >= 0
        assert self.balance.reserved >= 0
        assert self.balance.available == self.balance.posted - self.balance.reserved

    @invariant()
    def version_counts_updates(self) -> None:
        assert self.balance.version == self.applied


LedgerMachine.TestCase.settings = settings(max_examples=50, stateful_step_count=30, deadline=None)
TestLedgerProperties = LedgerMachine.TestCase


def test_a_credit_past_the_largest_balance_is_refused_in_memory_too() -> None:
    largest = amount_max(CREDIT)
    funded = Balance.zero(CREDIT).apply(BalanceDelta(BRAND, CREDIT, largest, D(0)))
    assert funded.posted == D("999999999999999.99")

    with pytest.raises(BadUserInput):
        funded.apply(BalanceDelta(BRAND, CREDIT, D("0.01"), D(0)))
    assert BalanceDelta(BRAND, CREDIT, D("-1.00"), D(0)).max_posted is None
