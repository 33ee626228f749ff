"""Balance arithmetic, expressed as deltas for conditional ``ADD`` updates.

A balance item holds posted, reserved, available (= posted - reserved) and a
version. Writers never read-modify-write it: each transaction ADDs a delta
under a condition on the current values (``available >= n`` before a charge or
reservation, ``reserved >= n`` before a release or settlement, ``posted <=
max - n`` before a credit), so concurrent charges cannot overdraw and
concurrent grants cannot push a balance past what the ledger can hold.
``Balance.apply`` is the same rule in memory: what the store's condition would
refuse, it refuses with the same error.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from domain.errors import BadUserInput, Conflict, InsufficientCredits, ProofgateError

from .accounts import brand_account, parse_account
from .amounts import amount_max, check_amount, format_amount, require_positive
from .transactions import LedgerTransaction

__all__ = [
    "Balance",
    "BalanceDelta",
    "balance_overflow",
    "release_delta",
    "reservation_delta",
    "transaction_deltas",
]

_ZERO = Decimal(0)


@dataclass(frozen=True, slots=True)
class BalanceDelta:
    """What one ledger operation adds to one brand's balance item.

    ``min_available`` / ``min_reserved`` are the conditions the update carries;
    ``None`` means the update cannot make that quantity go negative.
    """

    brand_id: str
    currency: str
    posted: Decimal
    reserved: Decimal
    min_available: Decimal | None = None
    min_reserved: Decimal | None = None

    @property
    def available(self) -> Decimal:
        return self.posted - self.reserved

    @property
    def account(self) -> str:
        return brand_account(self.brand_id)

    @property
    def max_posted(self) -> Decimal | None:
        """The most ``posted`` may hold before a credit, so it never exceeds
        ``amount_max`` after it; None for a delta that does not raise it."""
        if self.posted <= 0:
            return None
        return amount_max(self.currency) - self.posted


def balance_overflow(currency: str) -> BadUserInput:
    largest = f"{format_amount(amount_max(currency), currency)} {currency}"
    return BadUserInput(
        f"This would take the {currency} balance past {largest}, the most it can hold",
        hint="Send a smaller amount; nothing was written.",
    )


@dataclass(frozen=True, slots=True)
class Balance:
    currency: str
    posted: Decimal
    reserved: Decimal
    available: Decimal
    version: int

    def __post_init__(self) -> None:
        if self.available != self.posted - self.reserved:
            raise ProofgateError(f"Corrupt {self.currency} balance: available != posted - reserved")

    @classmethod
    def zero(cls, currency: str) -> Balance:
        nothing = check_amount(_ZERO, currency)
        return cls(currency, nothing, nothing, nothing, 0)

    def apply(self, delta: BalanceDelta) -> Balance:
        if delta.currency != self.currency:
            raise ProofgateError(
                f"A {delta.currency} delta cannot apply to a {self.currency} balance"
            )
        if delta.min_available is not None and self.available < delta.min_available:
            raise InsufficientCredits(
                f"Needs {format_amount(delta.min_available, self.currency)} {self.currency}, "
                f"{format_amount(self.available, self.currency)} available",
                hint="Buy or be granted credits, then retry.",
            )
        if delta.min_reserved is not None and self.reserved < delta.min_reserved:
            raise Conflict("The reservation no longer covers this amount")
        if delta.max_posted is not None and self.posted > delta.max_posted:
            raise balance_overflow(self.currency)
        return Balance(
            self.currency,
            self.posted + delta.posted,
            self.reserved + delta.reserved,
            self.available + delta.available,
            self.version + 1,
        )


def transaction_deltas(
    transaction: LedgerTransaction, *, settle_reserved: bool = False
) -> tuple[BalanceDelta, ...]:
    """The deltas a transaction applies to brand balances, one per brand line.

    Platform accounts carry no condition and are left to the postings.
    With ``settle_reserved``, debits are paid from an earlier reservation (the
    batch registration path): posted and reserved fall together, so available
    does not move and the condition is on ``reserved`` instead.
    """
    deltas: list[BalanceDelta] = []
    for line in transaction.lines:
        brand_id = parse_account(line.account).brand_id
        if brand_id is None:
            continue
        amount = line.amount
        if amount >= 0:
            deltas.append(BalanceDelta(brand_id, line.currency, amount, _ZERO))
        elif settle_reserved:
            deltas.append(
                BalanceDelta(brand_id, line.currency, amount, amount, min_reserved=-amount)
            )
        else:
            deltas.append(
                BalanceDelta(brand_id, line.currency, amount, _ZERO, min_available=-amount)
            )
    return tuple(deltas)


def reservation_delta(brand_id: str, currency: str, amount: Decimal) -> BalanceDelta:
    """Set credits aside: available falls, posted does not, so nothing is owed
    until the reservation is settled by postings or released."""
    amount = require_positive(check_amount(amount, currency))
    return BalanceDelta(brand_id, currency, _ZERO, amount, min_available=amount)


def release_delta(brand_id: str, currency: str, amount: Decimal) -> BalanceDelta:
    amount = require_positive(check_amount(amount, currency))
    return BalanceDelta(brand_id, currency, _ZERO, -amount, min_reserved=amount)
