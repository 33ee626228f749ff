"""LedgerLineInput and LedgerTransactionInput."""

from __future__ import annotations

import strawberry

from domain.ledger import LedgerLine

from ..types.scalars import Decimal

__all__ = ["LedgerLineInput", "LedgerTransactionInput"]


@strawberry.input(description="A signed amount on one account, e.g. brand:<brandId>:credits")
class LedgerLineInput:
    account: str
    currency: str
    amount: Decimal

    def to_line(self) -> LedgerLine:
        return LedgerLine(self.account, self.currency, self.amount)


@strawberry.input(description="Lines must sum to zero per currency and move one brand's credits")
class LedgerTransactionInput:
    brand_id: strawberry.ID
    memo: str
    lines: list[LedgerLineInput]
