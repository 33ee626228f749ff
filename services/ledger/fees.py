"""Registration fees and plan grants, as actions for the caller's transaction.

The product registration and the brand registration own their transactions;
these functions only contribute the ledger's part, so a product exists exactly
when its fee was paid and a FREE brand exists exactly when its grant was
posted. ``ledger_failure`` turns a failed condition of one of these actions
into the error it means.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal

from domain.errors import ConditionFailed, Conflict, InsufficientCredits, ProofgateError
from domain.ledger import (
    CREDIT,
    FREE_PLAN_GRANT,
    balance_overflow,
    build_transaction,
    check_amount,
    format_amount,
    free_plan_grant_lines,
    registration_fee_lines,
    transaction_id,
)
from storage import All, Any_, AttributeAbsent, Compare, Comparison, Update, WriteAction
from storage.conditions import Condition

from .items import HOLD_PREFIX, TransactionKind, TransactionRecord
from .writes import transaction_actions

__all__ = [
    "FEE_ACTIONS",
    "charge_actions",
    "fee_actions",
    "fee_transaction_id",
    "grant_actions",
    "ledger_failure",
]

FEE_ACTIONS = 3
"""What a fee adds to a transaction: its item, the brand's posting, the
balance update. Callers that pack transactions reserve this many slots."""

_TOP_UP_HINT = "Ask the operator to grant credits (grantCredits), then retry."


def fee_transaction_id(product_ids: Sequence[str]) -> str:
    """Product ids are unique, so the fee of a group of products is named by
    its first: a retried registration cannot pay twice."""
    return transaction_id("registration", product_ids[0])


def charge_actions(
    brand_id: str, product_ids: Sequence[str], now: datetime, fee: Decimal
) -> list[WriteAction]:
    """Charge ``len(product_ids)`` registrations from available credits.
    Nothing (an empty list) when the fee is zero."""
    lines = registration_fee_lines(brand_id, fee, count=len(product_ids), currency=CREDIT)
    if not lines:
        return []
    transaction = build_transaction(
        id=fee_transaction_id(product_ids),
        memo=_fee_memo(len(product_ids)),
        created_at=now,
        lines=lines,
    )
    record = TransactionRecord(brand_id, TransactionKind.REGISTRATION_FEE, refs=product_ids)
    return transaction_actions(transaction, record)


def fee_actions(brand_id: str, product_id: str, now: datetime, fee: Decimal) -> list[WriteAction]:
    return charge_actions(brand_id, [product_id], now, fee)


def grant_actions(
    brand_id: str, now: datetime, amount: Decimal = FREE_PLAN_GRANT
) -> list[WriteAction]:
    """The FREE plan's starting credits. The id derives from the brand, so a
    brand can receive its plan grant once."""
    if check_amount(amount, CREDIT).is_zero():
        return []
    transaction = build_transaction(
        id=transaction_id("plan-grant", brand_id),
        memo="Free plan credits",
        created_at=now,
        lines=free_plan_grant_lines(brand_id, amount),
    )
    return transaction_actions(transaction, TransactionRecord(brand_id, TransactionKind.GRANT))


def _fee_memo(count: int) -> str:
    return "Registration fee" if count == 1 else f"Registration fee for {count} products"


def _required_available(condition: Condition | None) -> Decimal | None:
    match condition:
        case Compare("available", Comparison.GE, value):
            return Decimal(value)
        case All(conditions):
            for part in conditions:
                needed = _required_available(part)
                if needed is not None:
                    return needed
    return None


def _has_ceiling(condition: Condition | None) -> bool:
    match condition:
        case Any_((AttributeAbsent("posted"), Compare("posted", Comparison.LE, _))):
            return True
        case All(conditions):
            return any(_has_ceiling(part) for part in conditions)
    return False


def ledger_failure(error: ConditionFailed, actions: Sequence[WriteAction]) -> ProofgateError | None:
    """The error a failed ledger action means, or None when the failing action
    is not the ledger's (the caller explains its own)."""
    if not 0 <= error.index < len(actions):
        return None
    action = actions[error.index]
    key = action.key
    if key.pk.startswith("LEDGER#") and key.sk.startswith("BAL#") and isinstance(action, Update):
        if any(name.startswith(HOLD_PREFIX) for name in (*action.add, *action.remove)):
            return Conflict(
                "The credit reservation of this batch expired before it was used",
                hint="Retry the request; what was registered stays registered.",
            )
        currency = key.sk[len("BAL#") :]
        if _has_ceiling(action.condition):
            return balance_overflow(currency)
        needed = _required_available(action.condition)
        if needed is None:
            return Conflict("The balance changed concurrently", hint="Retry the request.")
        needs = f"{format_amount(needed, currency)} {currency}"
        return InsufficientCredits(
            f"Not enough credits: this needs {needs} available",
            hint=_TOP_UP_HINT,
        )
    if key.pk.startswith("LTXN#"):
        return Conflict("This ledger transaction was already posted", hint="Retry the request.")
    return None
