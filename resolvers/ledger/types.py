"""The ledger's GraphQL types: Ledger, Balance, Posting, LedgerTransaction."""

from __future__ import annotations

import re
from datetime import datetime

import strawberry

from domain.datetimes import parse_datetime
from domain.errors import BadUserInput, ProofgateError
from domain.ledger import CREDIT, CURRENCY_SCALES, currency_scale
from services.auth import Principal
from services.ledger.access import require_ledger_reader
from services.ledger.items import (
    balance_from_item,
    statement_month,
    stored_amount,
    transaction_from_item,
)
from storage import Item
from storage.access_patterns import LEDGER_BALANCE, LEDGER_STATEMENT, LEDGER_TRANSACTION

from ..context import Info
from ..fields import ap_field
from ..node.types import Node
from ..types.connection import Connection, connection
from ..types.scalars import DateTime, Decimal

__all__ = ["Balance", "Ledger", "LedgerLine", "LedgerTransaction", "Posting", "parse_month"]

_MONTH = re.compile(r"\d{4}-(0[1-9]|1[0-2])")


def parse_month(value: str | None, now: datetime) -> str:
    if value is None:
        return statement_month(now)
    if not isinstance(value, str) or not _MONTH.fullmatch(value):
        raise BadUserInput(f"month: {value!r} is not a month", hint="Use YYYY-MM, e.g. 2026-11.")
    return value


@strawberry.type(description="available = posted - reserved; version counts every change")
class Balance:
    currency: str
    posted: Decimal
    reserved: Decimal
    available: Decimal
    version: int

    @classmethod
    def from_item(cls, item: Item | None, currency: str) -> Balance:
        balance = balance_from_item(item, currency)
        return cls(
            currency=balance.currency,
            posted=balance.posted,
            reserved=balance.reserved,
            available=balance.available,
            version=balance.version,
        )


@strawberry.type(description="One signed line: negative takes from the account, positive adds")
class LedgerLine:
    account: str
    currency: str
    amount: Decimal


@strawberry.type(
    description="An immutable, balanced transaction: its lines sum to zero per currency. "
    "A correction is a reversing transaction, linked both ways."
)
class LedgerTransaction(Node):
    id: strawberry.ID
    memo: str
    created_at: DateTime
    lines: list[LedgerLine]
    _item: strawberry.Private[Item]

    @classmethod
    def from_item(cls, item: Item) -> LedgerTransaction:
        transaction = transaction_from_item(item)
        return cls(
            id=strawberry.ID(transaction.id),
            memo=transaction.memo,
            created_at=transaction.created_at,
            lines=[
                LedgerLine(account=x.account, currency=x.currency, amount=x.amount)
                for x in transaction.lines
            ],
            _item=item,
        )

    async def _linked(self, info: Info, attribute: str) -> LedgerTransaction | None:
        linked = self._item.get(attribute)
        if linked is None:
            return None
        item = await info.context.loaders.item(LEDGER_TRANSACTION, transaction_id=linked)
        return None if item is None else LedgerTransaction.from_item(item)

    @ap_field(LEDGER_TRANSACTION, description="The transaction this one reverses")
    async def reverses(self, info: Info) -> LedgerTransaction | None:
        return await self._linked(info, "reverses")

    @ap_field(LEDGER_TRANSACTION, description="The transaction that reversed this one")
    async def reversed_by(self, info: Info) -> LedgerTransaction | None:
        return await self._linked(info, "reversedBy")


@strawberry.type(description="One line of a transaction, as it moved the brand's account")
class Posting:
    transaction_id: strawberry.ID
    line: int
    account: str
    currency: str
    amount: Decimal
    posted_at: DateTime

    @classmethod
    def from_item(cls, item: Item) -> Posting:
        return cls(
            transaction_id=strawberry.ID(item["transactionId"]),
            line=int(item["line"]),
            account=item["account"],
            currency=item["currency"],
            amount=stored_amount(item["amount"], item["currency"]),
            posted_at=parse_datetime(item["postedAt"]),
        )

    @ap_field(LEDGER_TRANSACTION, description="The whole transaction, memo included")
    async def transaction(self, info: Info) -> LedgerTransaction:
        item = await info.context.loaders.item(
            LEDGER_TRANSACTION, transaction_id=self.transaction_id
        )
        if item is None:
            raise ProofgateError("A posting names a ledger transaction that does not exist")
        return LedgerTransaction.from_item(item)


@strawberry.type(description="A brand's credits: balances and monthly statements")
class Ledger:
    _brand_id: strawberry.Private[str]

    @classmethod
    def of(cls, principal: Principal, brand_id: str) -> Ledger:
        require_ledger_reader(principal, brand_id)
        return cls(_brand_id=brand_id)

    @ap_field(LEDGER_BALANCE, description="One balance per currency")
    async def balances(self, info: Info) -> list[Balance]:
        currencies = sorted(CURRENCY_SCALES)
        items = await info.context.loaders.items(
            LEDGER_BALANCE, [{"brand_id": self._brand_id, "currency": c} for c in currencies]
        )
        return [Balance.from_item(item, c) for item, c in zip(items, currencies, strict=True)]

    @ap_field(LEDGER_BALANCE)
    async def balance(self, info: Info, currency: str = CREDIT) -> Balance:
        currency_scale(currency)
        item = await info.context.loaders.item(
            LEDGER_BALANCE, brand_id=self._brand_id, currency=currency
        )
        return Balance.from_item(item, currency)

    @ap_field(
        LEDGER_STATEMENT,
        description="The postings of one month (YYYY-MM, default this month), oldest first",
    )
    async def statement(
        self,
        info: Info,
        month: str | None = None,
        first: int | None = None,
        after: str | None = None,
    ) -> Connection[Posting]:
        month = parse_month(month, info.context.now())
        page = await info.context.loaders.page(
            LEDGER_STATEMENT, {"brand_id": self._brand_id, "month": month}, first=first, after=after
        )
        return connection(page, Posting.from_item)
