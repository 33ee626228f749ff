"""How the ledger is stored.

- ``LTXN#<id>`` / ``META`` (AP17): the transaction, every line of it, the brand
  it belongs to and the links ``reverses`` / ``reversedBy``.
- ``LEDGER#<brand>#<yyyy-mm>`` / ``POST#<postedAt>#<txn>#<line>`` (AP16): one
  immutable posting per line on the brand's account, in the month it was
  posted, so a statement is one partition and no partition grows forever.
- ``LEDGER#<brand>`` / ``BAL#<currency>`` (AP15): the balance authority:
  ``posted``, ``reserved``, ``available``, ``version``, and one pair of
  attributes per open reservation (``hold_<id>``: what is still held,
  ``holdExpiresAt_<id>``: when it may be released by anyone).

Platform lines (``platform:grants``, ``platform:revenue``) live only in the
transaction item: every registration of every brand pays revenue, so a
platform posting partition would take every fee write in the system.

Amounts are stored as DynamoDB numbers (exact decimals) and re-read at their
currency's scale; a stored value that is not exact is corruption, not input.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any

from domain.datetimes import format_datetime, parse_datetime
from domain.errors import BadUserInput, ProofgateError
from domain.ledger import (
    Balance,
    LedgerLine,
    LedgerTransaction,
    check_amount,
    parse_account,
)
from storage import Item, Key, KeyTemplate
from storage.access_patterns import LEDGER_BALANCE, LEDGER_STATEMENT, LEDGER_TRANSACTION

__all__ = [
    "HOLD_EXPIRY_PREFIX",
    "HOLD_PREFIX",
    "POSTING_SORT",
    "Hold",
    "TransactionKind",
    "TransactionRecord",
    "balance_from_item",
    "balance_key",
    "holds_of",
    "posting_items",
    "statement_month",
    "stored_amount",
    "transaction_brand",
    "transaction_from_item",
    "transaction_item",
    "transaction_key",
]

POSTING_SORT = KeyTemplate("POST#{posted_at:time}#{transaction_id}#{line:int}")
HOLD_PREFIX = "hold_"
HOLD_EXPIRY_PREFIX = "holdExpiresAt_"


class TransactionKind(StrEnum):
    GRANT = "GRANT"
    REGISTRATION_FEE = "REGISTRATION_FEE"
    MANUAL = "MANUAL"
    REVERSAL = "REVERSAL"


def statement_month(moment: datetime) -> str:
    moment = moment.astimezone(UTC)
    return f"{moment.year:04d}-{moment.month:02d}"


def balance_key(brand_id: str, currency: str) -> Key:
    return LEDGER_BALANCE.key(brand_id=brand_id, currency=currency)


def transaction_key(transaction_id: str) -> Key:
    return LEDGER_TRANSACTION.key(transaction_id=transaction_id)


def stored_amount(value: Any, currency: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
        raise ProofgateError(f"Stored {currency} amount is not a number")
    try:
        return check_amount(Decimal(value), currency)
    except BadUserInput:
        raise ProofgateError(
            f"Stored {currency} amount {value} is not exact at its scale"
        ) from None


def transaction_brand(lines: Iterable[LedgerLine]) -> str:
    """The one brand a transaction belongs to: its partition, its tenant.

    One brand per transaction keeps a brand's statement complete in its own
    partitions and never shows one brand another brand's account.
    """
    brands = {parse_account(line.account).brand_id for line in lines} - {None}
    if len(brands) != 1:
        raise BadUserInput(
            "A ledger transaction moves credits of exactly one brand",
            hint="Post one transaction per brand, against platform accounts.",
        )
    (brand_id,) = brands
    assert brand_id is not None
    return brand_id


@dataclass(frozen=True, slots=True)
class TransactionRecord:
    """What the transaction item stores beside the transaction: the brand it
    belongs to, why it was posted, the request that posted it, what it pays for."""

    brand_id: str
    kind: TransactionKind
    idempotency_key: str | None = None
    fingerprint: str | None = None
    refs: Sequence[str] = ()


def transaction_item(transaction: LedgerTransaction, record: TransactionRecord) -> Item:
    key = transaction_key(transaction.id)
    item: Item = {
        "PK": key.pk,
        "SK": key.sk,
        "entity": "LedgerTransaction",
        "id": transaction.id,
        "brandId": record.brand_id,
        "kind": record.kind.value,
        "memo": transaction.memo,
        "createdAt": format_datetime(transaction.created_at),
        "lines": [
            {"account": line.account, "currency": line.currency, "amount": line.amount}
            for line in transaction.lines
        ],
    }
    if transaction.reverses is not None:
        item["reverses"] = transaction.reverses
    if record.idempotency_key is not None:
        item["idempotencyKey"] = record.idempotency_key
        item["requestFingerprint"] = record.fingerprint
    if record.refs:
        item["refs"] = list(record.refs)
    return item


def posting_items(transaction: LedgerTransaction, brand_id: str) -> list[Item]:
    """The postings of the brand's lines, each keyed by (time, transaction, line)."""
    partition = LEDGER_STATEMENT.partition(
        {"brand_id": brand_id, "month": statement_month(transaction.created_at)}
    )
    posted_at = format_datetime(transaction.created_at)
    items: list[Item] = []
    for number, line in enumerate(transaction.lines):
        if parse_account(line.account).brand_id != brand_id:
            continue
        sort = POSTING_SORT.format(
            {"posted_at": transaction.created_at, "transaction_id": transaction.id, "line": number}
        )
        items.append(
            {
                "PK": partition,
                "SK": sort,
                "entity": "Posting",
                "brandId": brand_id,
                "transactionId": transaction.id,
                "line": number,
                "account": line.account,
                "currency": line.currency,
                "amount": line.amount,
                "postedAt": posted_at,
            }
        )
    return items


def transaction_from_item(item: Mapping[str, Any]) -> LedgerTransaction:
    """The stored transaction as it is, not re-validated: reconcile must be
    able to read an unbalanced one in order to report it."""
    lines = tuple(
        LedgerLine(
            line["account"], line["currency"], stored_amount(line["amount"], line["currency"])
        )
        for line in item["lines"]
    )
    return LedgerTransaction(
        id=item["id"],
        memo=item.get("memo", ""),
        created_at=parse_datetime(item["createdAt"]),
        lines=lines,
        reverses=item.get("reverses"),
    )


@dataclass(frozen=True, slots=True)
class Hold:
    """An open reservation: what it still holds and when it expires (epoch s)."""

    id: str
    amount: Decimal
    expires_at: int

    @property
    def attribute(self) -> str:
        return HOLD_PREFIX + self.id

    @property
    def expiry_attribute(self) -> str:
        return HOLD_EXPIRY_PREFIX + self.id


def holds_of(item: Mapping[str, Any] | None, currency: str) -> list[Hold]:
    if item is None:
        return []
    holds = []
    for name, value in item.items():
        if name.startswith(HOLD_PREFIX):
            hold_id = name[len(HOLD_PREFIX) :]
            expires = item.get(HOLD_EXPIRY_PREFIX + hold_id, 0)
            holds.append(Hold(hold_id, stored_amount(value, currency), int(expires)))
    return sorted(holds, key=lambda hold: hold.id)


def balance_from_item(item: Mapping[str, Any] | None, currency: str) -> Balance:
    """A brand that never held credits has a zero balance at version 0."""
    if item is None:
        return Balance.zero(currency)
    return Balance(
        currency,
        stored_amount(item.get("posted", 0), currency),
        stored_amount(item.get("reserved", 0), currency),
        stored_amount(item.get("available", 0), currency),
        int(item.get("version", 0)),
    )
