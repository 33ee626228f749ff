"""Reconciling one brand's ledger from its own items.

Proves, per currency, that the postings sum to the balance's ``posted``,
that ``available = posted - reserved``, that ``reserved`` is exactly what the
open holds hold, and that nothing is negative. Every transaction a posting
names must exist, belong to the brand, sum to zero per currency, and have
exactly one posting per brand line, equal to that line; reversal links must
agree in both directions and a reversal must negate its original.

The store gives no snapshot across these reads, so a brand is read between
two reads of its balances' versions (every ledger write moves one): if a
version moved, the brand is read again. Findings count only once two
attempts with unmoved versions agree on them, because the statement reads
are eventually consistent on DynamoDB (docs/design.md, "Reconcile").
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from domain.datetimes import format_datetime
from domain.errors import ProofgateError
from domain.ledger import CURRENCY_SCALES, LedgerTransaction, brand_account
from storage import Item, Storage
from storage.access_patterns import LEDGER_BALANCE, LEDGER_STATEMENT, LEDGER_TRANSACTION

from ..ledger.directory import SYSTEM_TENANT
from ..ledger.items import holds_of, statement_month, stored_amount, transaction_from_item
from ..paging import query_all
from .report import Report

__all__ = ["SETTLE_ATTEMPTS", "check_ledger", "months_between"]

_MALFORMED = (KeyError, TypeError, ValueError, ProofgateError)
SETTLE_ATTEMPTS = 5
SETTLE_PAUSE = 0.25
"""Seconds before the second attempt, doubling after: longer than DynamoDB
takes to make a committed write visible to an eventually consistent read."""


def months_between(start: datetime, end: datetime) -> Iterator[str]:
    year, month = start.astimezone(UTC).year, start.astimezone(UTC).month
    last = statement_month(end)
    while True:
        current = f"{year:04d}-{month:02d}"
        yield current
        if current >= last:
            return
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)


async def _postings(storage: Storage, brand_id: str, month: str) -> list[Item]:
    params = {"brand_id": brand_id, "month": month}
    return await query_all(storage, LEDGER_STATEMENT, params, tenant=SYSTEM_TENANT)


async def _versions(storage: Storage, brand_id: str) -> list[object]:
    currencies = sorted(CURRENCY_SCALES)
    items = await storage.batch_get(
        LEDGER_BALANCE, [{"brand_id": brand_id, "currency": c} for c in currencies]
    )
    return [None if item is None else item.get("version") for item in items]


async def check_ledger(
    storage: Storage, brand_id: str, since: datetime, until: datetime, report: Report
) -> None:
    """Adds the brand's findings to ``report``, or names the brand unsettled
    when its ledger moved under every attempt."""
    agreed: list[str] | None = None
    for attempt in range(SETTLE_ATTEMPTS):
        if attempt:
            await asyncio.sleep(SETTLE_PAUSE * 2 ** (attempt - 1))
        before = await _versions(storage, brand_id)
        trial = Report()
        await _check_once(storage, brand_id, since, until, trial)
        if await _versions(storage, brand_id) != before:
            agreed = None
            continue
        found = [str(discrepancy) for discrepancy in trial.discrepancies]
        if trial.ok or found == agreed:
            report.merge(trial)
            return
        agreed = found
    report.unsettled.append(brand_id)


async def _check_once(
    storage: Storage, brand_id: str, since: datetime, until: datetime, report: Report
) -> None:
    postings: list[Item] = []
    for month in months_between(since, until):
        postings.extend(await _postings(storage, brand_id, month))
    report.postings += len(postings)
    by_line: dict[tuple[str, int], Item] = {}
    sums: dict[str, Decimal] = defaultdict(Decimal)
    account = brand_account(brand_id)
    for posting in postings:
        subject = f"posting {posting['SK']}"
        try:
            amount = stored_amount(posting["amount"], posting["currency"])
            by_line[(posting["transactionId"], int(posting["line"]))] = posting
        except _MALFORMED as error:
            report.add(brand_id, subject, f"malformed posting ({error})")
            continue
        if posting.get("account") != account:
            report.add(brand_id, subject, f"posts to {posting.get('account')!r}, not {account}")
        sums[posting["currency"]] += amount
    await _check_balances(storage, brand_id, sums, report)
    await _check_transactions(storage, brand_id, by_line, report)


async def _check_balances(
    storage: Storage, brand_id: str, sums: Mapping[str, Decimal], report: Report
) -> None:
    currencies = sorted(set(CURRENCY_SCALES) | set(sums))
    items = await storage.batch_get(
        LEDGER_BALANCE, [{"brand_id": brand_id, "currency": c} for c in currencies]
    )
    for currency, item in zip(currencies, items, strict=True):
        subject = f"balance {currency}"
        total = sums.get(currency, Decimal(0))
        if item is None:
            if total:
                report.add(brand_id, subject, f"missing, but postings sum to {total}")
            continue
        try:
            posted = stored_amount(item["posted"], currency)
            reserved = stored_amount(item["reserved"], currency)
            available = stored_amount(item["available"], currency)
            held = sum((hold.amount for hold in holds_of(item, currency)), Decimal(0))
        except _MALFORMED as error:
            report.add(brand_id, subject, f"malformed balance item ({error})")
            continue
        if posted != total:
            report.add(brand_id, subject, f"posted is {posted} but the postings sum to {total}")
        if available != posted - reserved:
            report.add(
                brand_id, subject, f"available {available} != posted {posted} - reserved {reserved}"
            )
        if reserved != held:
            report.add(brand_id, subject, f"reserved is {reserved} but open holds hold {held}")
        if available < 0 or reserved < 0:
            report.add(brand_id, subject, f"negative: available {available}, reserved {reserved}")


async def _check_transactions(
    storage: Storage, brand_id: str, by_line: Mapping[tuple[str, int], Item], report: Report
) -> None:
    ids = sorted({transaction_id for transaction_id, _ in by_line})
    items = await storage.batch_get(LEDGER_TRANSACTION, [{"transaction_id": i} for i in ids])
    loaded: dict[str, tuple[Item, LedgerTransaction]] = {}
    for transaction_id, item in zip(ids, items, strict=True):
        subject = f"transaction {transaction_id}"
        if item is None:
            report.add(brand_id, subject, "named by a posting but does not exist")
            continue
        try:
            loaded[transaction_id] = (item, transaction_from_item(item))
        except _MALFORMED as error:
            report.add(brand_id, subject, f"malformed transaction item ({error})")
    report.transactions += len(loaded)
    expected: set[tuple[str, int]] = set()
    for transaction_id, (item, transaction) in loaded.items():
        for problem in _transaction_problems(brand_id, item, transaction, by_line, expected):
            report.add(brand_id, f"transaction {transaction_id}", problem)
        for problem in _link_problems(item, transaction, loaded):
            report.add(brand_id, f"transaction {transaction_id}", problem)
    for transaction_id, line in sorted(set(by_line) - expected):
        if transaction_id in loaded:
            report.add(
                brand_id,
                f"posting {by_line[(transaction_id, line)]['SK']}",
                f"line {line} of {transaction_id} is not a line on the brand's account",
            )


def _transaction_problems(
    brand_id: str,
    item: Item,
    transaction: LedgerTransaction,
    by_line: Mapping[tuple[str, int], Item],
    expected: set[tuple[str, int]],
) -> Iterator[str]:
    if item.get("brandId") != brand_id:
        yield f"belongs to brand {item.get('brandId')!r}"
    totals: dict[str, Decimal] = defaultdict(Decimal)
    for line in transaction.lines:
        totals[line.currency] += line.amount
    for currency, total in sorted(totals.items()):
        if total:
            yield f"unbalanced: {currency} lines sum to {total}"
    account = brand_account(brand_id)
    posted_at = format_datetime(transaction.created_at)
    month = statement_month(transaction.created_at)
    for number, line in enumerate(transaction.lines):
        if line.account != account:
            continue
        expected.add((transaction.id, number))
        posting = by_line.get((transaction.id, number))
        if posting is None:
            yield f"line {number} ({line.amount} {line.currency}) has no posting"
            continue
        yield from _posting_problems(number, line.currency, line.amount, posting, posted_at, month)


def _posting_problems(
    number: int,
    currency: str,
    amount: Decimal,
    posting: Mapping[str, Any],
    posted_at: str,
    month: str,
) -> Iterator[str]:
    stored = stored_amount(posting["amount"], posting["currency"])
    if posting["currency"] != currency or stored != amount:
        yield (
            f"line {number} is {amount} {currency} but its posting says "
            f"{stored} {posting['currency']}"
        )
    if posting.get("postedAt") != posted_at or not posting["PK"].endswith(f"#{month}"):
        yield f"line {number}'s posting is not dated with the transaction ({posted_at})"


def _link_problems(
    item: Item, transaction: LedgerTransaction, loaded: Mapping[str, tuple[Item, LedgerTransaction]]
) -> Iterator[str]:
    original_id = transaction.reverses
    if original_id is not None:
        original = loaded.get(original_id)
        if original is None:
            yield f"reverses {original_id}, which has no posting on this brand"
        else:
            if original[0].get("reversedBy") != transaction.id:
                yield f"reverses {original_id}, which does not name it as its reversal"
            negated = tuple(line.negated() for line in original[1].lines)
            if transaction.lines != negated:
                yield f"does not negate the lines of {original_id}"
    reversal_id = item.get("reversedBy")
    if reversal_id is not None:
        reversal = loaded.get(reversal_id)
        if reversal is None or reversal[1].reverses != transaction.id:
            yield f"names {reversal_id} as its reversal, which does not reverse it"
