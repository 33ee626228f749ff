"""grantCredits, postLedgerTransaction and reverseLedgerTransaction.

Each writes, in one transaction: the idempotency record (AP18, created
conditionally), the ledger transaction, its postings and its conditional
balance updates. Two concurrent first uses of one key therefore yield one
transaction: the loser's record create fails and it returns the winner's
result. The transaction id derives from the key (or, for a reversal, from the
original), so even a retry after the record expired cannot post twice.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

from domain.errors import BadUserInput, ConditionFailed, Conflict, NotFound, ProofgateError
from domain.ledger import (
    CREDIT,
    TRANSACTION_ID_PREFIX,
    LedgerLine,
    LedgerTransaction,
    build_transaction,
    check_amount,
    check_balanced,
    grant_lines,
    require_positive,
    reversal_of,
    transaction_id,
)
from domain.validation import MEMO, validate_id
from storage import ConditionCheck, Item, ItemExists, Key, Put, WriteAction
from storage.access_patterns import BRAND_BY_ID, LEDGER_TRANSACTION

from ..context import CommandContext
from ..idempotency import Idempotency
from ..transact import transact
from .fees import ledger_failure
from .items import (
    TransactionKind,
    TransactionRecord,
    transaction_brand,
    transaction_from_item,
    transaction_key,
)
from .writes import reversal_link, transaction_actions

__all__ = [
    "grant_credits",
    "parse_transaction_id",
    "post_transaction",
    "reverse_transaction",
]

_TRANSACTION_ID = re.compile(re.escape(TRANSACTION_ID_PREFIX) + r"[0-9a-f]{32}")
_KEY_REUSED = "idempotencyKey was already used for a different request"
_KEY_HINT = "Send a new idempotencyKey for a new request; reuse a key only to retry."


def parse_transaction_id(value: str, *, field: str = "id") -> str:
    if not isinstance(value, str) or not _TRANSACTION_ID.fullmatch(value):
        raise BadUserInput(
            f"{field}: {value[:80]!r} is not a ledger transaction id",
            hint=f"Ledger transaction ids look like {TRANSACTION_ID_PREFIX}<32 hex digits>.",
        )
    return value


@dataclass(frozen=True)
class _Plan:
    transaction: LedgerTransaction
    actions: list[WriteAction]
    """Everything after the idempotency record; the transaction's item first."""
    failures: Mapping[Key, ProofgateError] = field(default_factory=dict)
    """What a failed condition on one of these keys means."""


def _idempotency(context: CommandContext, operation: str, key: str, body: object) -> Idempotency:
    idempotency = Idempotency.of(
        key, scope=context.principal.tenant, operation=operation, body=body
    )
    assert idempotency is not None
    return idempotency


def _brand_exists(brand_id: str) -> ConditionCheck:
    return ConditionCheck(BRAND_BY_ID.key(brand_id=brand_id), ItemExists())


async def _load(
    context: CommandContext, transaction_id: str, *, fresh: bool = False
) -> Item | None:
    if fresh:
        context.loaders.forget(LEDGER_TRANSACTION, transaction_id=transaction_id)
    return await context.loaders.item(LEDGER_TRANSACTION, transaction_id=transaction_id)


async def _replay(
    context: CommandContext, idempotency: Idempotency, now: datetime, *, fresh: bool = False
) -> Item | None:
    record = await idempotency.lookup(context.loaders, now, fresh=fresh)
    if record is None:
        return None
    item = await _load(context, record["result"]["transactionId"])
    if item is None:
        raise ProofgateError("An idempotency record names a ledger transaction that does not exist")
    return item


async def _commit(
    context: CommandContext,
    idempotency: Idempotency,
    plan: Callable[[datetime], Awaitable[_Plan]],
) -> Item:
    now = context.now()
    replayed = await _replay(context, idempotency, now)
    if replayed is not None:
        return replayed
    planned = await plan(now)
    record = idempotency.create(now, {"transactionId": planned.transaction.id})
    actions: list[WriteAction] = [record, *planned.actions]
    try:
        await transact(context.storage, actions)
    except ConditionFailed as error:
        return await _after_failure(context, idempotency, planned, actions, error)
    written = planned.actions[0]
    assert isinstance(written, Put)
    context.loaders.prime(LEDGER_TRANSACTION, written.item, transaction_id=planned.transaction.id)
    return written.item


async def _after_failure(
    context: CommandContext,
    idempotency: Idempotency,
    planned: _Plan,
    actions: Sequence[WriteAction],
    error: ConditionFailed,
) -> Item:
    """A failed condition is either a concurrent twin of this request (return
    its result) or the answer to this one (raise what it means)."""
    if error.index == 0:
        replayed = await _replay(context, idempotency, context.now(), fresh=True)
        if replayed is None:
            raise Conflict(
                "A request with this idempotencyKey collided with another", hint="Retry it."
            )
        return replayed
    failed = actions[error.index]
    if failed.key == transaction_key(planned.transaction.id):
        existing = await _load(context, planned.transaction.id, fresh=True)
        if (
            existing is not None
            and existing.get("idempotencyKey") == idempotency.key
            and existing.get("requestFingerprint") == idempotency.fingerprint
        ):
            return existing
    if failed.key in planned.failures:
        raise planned.failures[failed.key]
    if isinstance(failed, ConditionCheck):
        raise NotFound("Brand not found")
    raise ledger_failure(error, actions) or Conflict(
        "The ledger changed concurrently", hint="Retry the request."
    )


async def grant_credits(
    context: CommandContext,
    *,
    brand_id: str,
    amount: Decimal,
    memo: str | None,
    idempotency_key: str,
) -> Item:
    context.principal.require_admin()
    brand_id = validate_id(brand_id, field="brandId")
    amount = require_positive(check_amount(amount, CREDIT))
    memo = MEMO.optional(memo) or "Credit grant"
    body = {"brandId": brand_id, "amount": amount, "memo": memo}
    idempotency = _idempotency(context, "grantCredits", idempotency_key, body)
    lines = grant_lines(brand_id, amount)
    plan = _new_transaction(
        "grantCredits", idempotency, brand_id, TransactionKind.GRANT, memo, lines
    )
    return await _commit(context, idempotency, plan)


async def post_transaction(
    context: CommandContext,
    *,
    brand_id: str,
    memo: str | None,
    lines: Sequence[LedgerLine],
    idempotency_key: str,
) -> Item:
    context.principal.require_admin()
    brand_id = validate_id(brand_id, field="input.brandId")
    memo = MEMO.optional(memo, field="input.memo") or ""
    checked = check_balanced(lines)
    if transaction_brand(checked) != brand_id:
        raise BadUserInput(
            f"input.lines: the lines move credits of a brand other than {brand_id}",
            hint=f"Post against brand:{brand_id}:credits and platform accounts.",
        )
    body = {"brandId": brand_id, "memo": memo, "lines": list(checked)}
    idempotency = _idempotency(context, "postLedgerTransaction", idempotency_key, body)
    plan = _new_transaction(
        "postLedgerTransaction", idempotency, brand_id, TransactionKind.MANUAL, memo, checked
    )
    return await _commit(context, idempotency, plan)


def _new_transaction(
    operation: str,
    idempotency: Idempotency,
    brand_id: str,
    kind: TransactionKind,
    memo: str,
    lines: Sequence[LedgerLine],
) -> Callable[[datetime], Awaitable[_Plan]]:
    """A transaction whose id derives from the idempotency key, so a retry
    after the record expired collides with the first instead of posting twice."""

    async def plan(now: datetime) -> _Plan:
        transaction = build_transaction(
            id=transaction_id(f"{operation}/{idempotency.scope}", idempotency.key),
            memo=memo,
            created_at=now,
            lines=lines,
        )
        record = TransactionRecord(brand_id, kind, idempotency.key, idempotency.fingerprint)
        reused = Conflict(_KEY_REUSED, hint=_KEY_HINT)
        return _Plan(
            transaction,
            [*transaction_actions(transaction, record), _brand_exists(brand_id)],
            {transaction_key(transaction.id): reused},
        )

    return plan


async def reverse_transaction(
    context: CommandContext, *, transaction_id: str, idempotency_key: str
) -> Item:
    context.principal.require_admin()
    original_id = parse_transaction_id(transaction_id)
    idempotency = _idempotency(
        context, "reverseLedgerTransaction", idempotency_key, {"id": original_id}
    )

    async def plan(now: datetime) -> _Plan:
        item = await _load(context, original_id, fresh=True)
        if item is None:
            raise NotFound("Ledger transaction not found")
        reversal = reversal_of(
            transaction_from_item(item), created_at=now, reversed_by=item.get("reversedBy")
        )
        record = TransactionRecord(
            item["brandId"], TransactionKind.REVERSAL, idempotency.key, idempotency.fingerprint
        )
        actions = transaction_actions(reversal, record)
        twice = Conflict(f"Transaction {original_id} is already reversed")
        return _Plan(
            reversal,
            [*actions, reversal_link(original_id, reversal.id)],
            {transaction_key(reversal.id): twice, transaction_key(original_id): twice},
        )

    reversal = await _commit(context, idempotency, plan)
    # The original now names its reversal; a nested read must not see the old copy.
    context.loaders.forget(LEDGER_TRANSACTION, transaction_id=original_id)
    return reversal
