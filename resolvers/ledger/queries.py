"""ledgerTransaction(id)."""

from __future__ import annotations

import strawberry

from domain.errors import NotFound
from services.ledger.access import can_read_ledger
from services.ledger.commands import parse_transaction_id
from storage.access_patterns import LEDGER_TRANSACTION

from ..context import Info
from ..fields import ap_field
from .types import LedgerTransaction

__all__ = ["LedgerQueries"]


@strawberry.type
class LedgerQueries:
    @ap_field(
        LEDGER_TRANSACTION,
        description="A ledger transaction of the caller's brand (any brand for the operator)",
    )
    async def ledger_transaction(self, info: Info, id: strawberry.ID) -> LedgerTransaction | None:
        principal = info.context.principal
        principal.require_authenticated()
        transaction_id = parse_transaction_id(id)
        item = await info.context.loaders.item(LEDGER_TRANSACTION, transaction_id=transaction_id)
        if item is None or not can_read_ledger(principal, item["brandId"]):
            raise NotFound("Ledger transaction not found")
        return LedgerTransaction.from_item(item)
