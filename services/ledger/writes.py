"""The write actions of a ledger transaction.

One transaction writes its item, its postings and one conditional ``ADD`` per
brand balance it moves, all in the caller's TransactWriteItems: the postings
and the balance can never disagree, and a charge that would overdraw fails its
balance condition, which cancels everything else in the same transaction
(the product a fee pays for included).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal

from domain.ledger import BalanceDelta, LedgerTransaction, transaction_deltas
from storage import (
    All,
    Any_,
    AttributeAbsent,
    Compare,
    Comparison,
    ItemAbsent,
    ItemExists,
    Put,
    Update,
    WriteAction,
)
from storage.conditions import Condition

from .items import (
    TransactionRecord,
    balance_key,
    posting_items,
    transaction_item,
    transaction_key,
)

__all__ = [
    "balance_ceiling",
    "balance_update",
    "record_actions",
    "reversal_link",
    "transaction_actions",
]


def balance_update(
    delta: BalanceDelta,
    *,
    add: Mapping[str, Decimal] | None = None,
    assign: Mapping[str, object] | None = None,
    remove: Sequence[str] = (),
    conditions: Sequence[Condition] = (),
) -> Update:
    """``available`` moves with ``posted - reserved`` in the same ADD, so the
    invariant holds in every committed image; ``version`` counts the changes."""
    checks = list(conditions)
    if delta.min_available is not None:
        checks.insert(0, Compare("available", Comparison.GE, delta.min_available))
    if delta.min_reserved is not None:
        checks.insert(0, Compare("reserved", Comparison.GE, delta.min_reserved))
    if delta.max_posted is not None:
        checks.insert(0, balance_ceiling(delta.max_posted))
    return Update(
        balance_key(delta.brand_id, delta.currency),
        set=dict(assign or {}),
        set_if_absent={"entity": "Balance", "brandId": delta.brand_id, "currency": delta.currency},
        add={
            "posted": delta.posted,
            "reserved": delta.reserved,
            "available": delta.available,
            "version": 1,
            **(add or {}),
        },
        remove=tuple(remove),
        condition=All(*checks) if len(checks) > 1 else (checks[0] if checks else None),
    )


def balance_ceiling(max_posted: Decimal) -> Condition:
    """A balance item that does not exist yet holds nothing."""
    return Any_(AttributeAbsent("posted"), Compare("posted", Comparison.LE, max_posted))


def record_actions(transaction: LedgerTransaction, record: TransactionRecord) -> list[WriteAction]:
    """The transaction item and its postings, each a conditional create: a
    transaction id is deterministic, so a second attempt at the same
    transaction collides instead of posting twice."""
    return [
        Put(transaction_item(transaction, record), ItemAbsent()),
        *(Put(posting, ItemAbsent()) for posting in posting_items(transaction, record.brand_id)),
    ]


def transaction_actions(
    transaction: LedgerTransaction, record: TransactionRecord
) -> list[WriteAction]:
    """Transaction item, postings, then one conditional balance update per brand line."""
    return [
        *record_actions(transaction, record),
        *(balance_update(delta) for delta in transaction_deltas(transaction)),
    ]


def reversal_link(original_id: str, reversal_id: str) -> Update:
    """Marks the original reversed, once: a second reversal fails here even if
    it raced the first past every read."""
    return Update(
        transaction_key(original_id),
        set={"reversedBy": reversal_id},
        condition=All(ItemExists(), AttributeAbsent("reversedBy"), AttributeAbsent("reverses")),
    )
