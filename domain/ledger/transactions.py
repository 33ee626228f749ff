"""Balanced, immutable ledger transactions and their reversals.

Every line is a signed posting to one account; a transaction sums to zero per
currency. An account appears at most once per currency in a transaction, so
each line maps to exactly one balance update (DynamoDB refuses two actions on
one item in a transaction). Transactions are never edited: a correction is a
reversing transaction whose id is derived from the original's, so reversing
twice collides on the id instead of relying on a read.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from domain.canonical import canonical_json, sha256_hex
from domain.errors import BadUserInput, Conflict

from .accounts import parse_account
from .amounts import check_amount

__all__ = [
    "LEDGER_LINES_MAX",
    "LEDGER_MEMO_MAX_CHARS",
    "TRANSACTION_ID_PREFIX",
    "LedgerLine",
    "LedgerTransaction",
    "build_transaction",
    "can_reverse",
    "check_balanced",
    "check_reversible",
    "reversal_id",
    "reversal_of",
    "transaction_id",
]

LEDGER_LINES_MAX = 25
"""Each line costs a posting put and a balance update; 25 lines plus the
transaction and idempotency items stay well inside one 100-item transaction."""
LEDGER_MEMO_MAX_CHARS = 500
TRANSACTION_ID_PREFIX = "ltx_"


@dataclass(frozen=True, slots=True)
class LedgerLine:
    account: str
    currency: str
    amount: Decimal

    def negated(self) -> LedgerLine:
        return LedgerLine(self.account, self.currency, -self.amount)


@dataclass(frozen=True, slots=True)
class LedgerTransaction:
    id: str
    memo: str
    created_at: datetime
    lines: tuple[LedgerLine, ...]
    reverses: str | None = None

    @property
    def is_reversal(self) -> bool:
        return self.reverses is not None


def transaction_id(scope: str, seed: str) -> str:
    """Deterministic from (scope, seed): the seed is the idempotency key when the
    caller sent one (so a retry lands on the same id) or a fresh random value."""
    return TRANSACTION_ID_PREFIX + sha256_hex(canonical_json([scope, seed]))[:32]


def reversal_id(original_id: str) -> str:
    return transaction_id("reversal", original_id)


def check_balanced(lines: Iterable[LedgerLine]) -> tuple[LedgerLine, ...]:
    """Validate lines and return them with amounts at their currency's scale."""
    checked: list[LedgerLine] = []
    totals: dict[str, Decimal] = {}
    seen: set[tuple[str, str]] = set()
    for index, line in enumerate(lines):
        if index >= LEDGER_LINES_MAX:
            raise BadUserInput(f"A ledger transaction has at most {LEDGER_LINES_MAX} lines")
        parse_account(line.account)
        amount = check_amount(line.amount, line.currency)
        if amount.is_zero():
            raise BadUserInput(f"lines[{index}]: amount must not be zero")
        if (line.account, line.currency) in seen:
            raise BadUserInput(
                f"lines[{index}]: account {line.account} appears twice for {line.currency}",
                hint="Merge lines that post to the same account and currency.",
            )
        seen.add((line.account, line.currency))
        totals[line.currency] = totals.get(line.currency, Decimal(0)) + amount
        checked.append(LedgerLine(line.account, line.currency, amount))
    if len(checked) < 2:
        raise BadUserInput("A ledger transaction needs at least two lines")
    unbalanced = sorted(currency for currency, total in totals.items() if total != 0)
    if unbalanced:
        raise BadUserInput(
            f"Lines do not sum to zero for {', '.join(unbalanced)}",
            hint="Debits and credits must balance per currency.",
        )
    return tuple(checked)


def build_transaction(
    *,
    id: str,
    memo: str,
    created_at: datetime,
    lines: Iterable[LedgerLine],
    reverses: str | None = None,
) -> LedgerTransaction:
    if len(memo) > LEDGER_MEMO_MAX_CHARS:
        raise BadUserInput(f"memo is longer than {LEDGER_MEMO_MAX_CHARS} characters")
    return LedgerTransaction(id, memo, created_at, check_balanced(lines), reverses)


def can_reverse(original: LedgerTransaction, reversed_by: str | None) -> bool:
    """A transaction is reversed at most once, and a reversal is never reversed:
    to undo a reversal, post a new transaction."""
    return not original.is_reversal and reversed_by is None


def check_reversible(original: LedgerTransaction, reversed_by: str | None) -> None:
    if original.is_reversal:
        raise Conflict(
            "A reversing transaction cannot be reversed",
            hint="Post a new transaction to correct it.",
        )
    if reversed_by is not None:
        raise Conflict(f"Transaction {original.id} is already reversed by {reversed_by}")


def reversal_of(
    original: LedgerTransaction,
    *,
    created_at: datetime,
    memo: str | None = None,
    reversed_by: str | None = None,
) -> LedgerTransaction:
    check_reversible(original, reversed_by)
    return build_transaction(
        id=reversal_id(original.id),
        memo=f"Reversal of {original.id}" if memo is None else memo,
        created_at=created_at,
        lines=(line.negated() for line in original.lines),
        reverses=original.id,
    )
