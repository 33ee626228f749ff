"""grantCredits, postLedgerTransaction, reverseLedgerTransaction (operator only)."""

from __future__ import annotations

from typing import Annotated

import strawberry

from services.ledger.commands import grant_credits, post_transaction, reverse_transaction
from storage.access_patterns import IDEMPOTENCY_RECORD, LEDGER_TRANSACTION

from ..context import Info
from ..fields import mutation_field
from ..types.scalars import Decimal
from .inputs import LedgerTransactionInput
from .types import LedgerTransaction

__all__ = ["LedgerMutations"]

IdempotencyKey = Annotated[
    str,
    strawberry.argument(
        description="Required. A retry with the same key and body returns the first result; "
        "the same key with another body is CONFLICT."
    ),
]


@strawberry.type
class LedgerMutations:
    @mutation_field(reads=IDEMPOTENCY_RECORD, description="Add credits to a brand (operator only)")
    async def grant_credits(
        self,
        info: Info,
        brand_id: strawberry.ID,
        amount: Decimal,
        idempotency_key: IdempotencyKey,
        memo: str | None = None,
    ) -> LedgerTransaction:
        item = await grant_credits(
            info.context,
            brand_id=brand_id,
            amount=amount,
            memo=memo,
            idempotency_key=idempotency_key,
        )
        return LedgerTransaction.from_item(item)

    @mutation_field(
        reads=IDEMPOTENCY_RECORD,
        description="Post a balanced transaction on one brand's account (operator only)",
    )
    async def post_ledger_transaction(
        self, info: Info, input: LedgerTransactionInput, idempotency_key: IdempotencyKey
    ) -> LedgerTransaction:
        item = await post_transaction(
            info.context,
            brand_id=input.brand_id,
            memo=input.memo,
            lines=[line.to_line() for line in input.lines],
            idempotency_key=idempotency_key,
        )
        return LedgerTransaction.from_item(item)

    @mutation_field(
        reads=LEDGER_TRANSACTION,
        description="Post the exact opposite of a transaction and link the two; once per "
        "transaction (operator only)",
    )
    async def reverse_ledger_transaction(
        self, info: Info, id: strawberry.ID, idempotency_key: IdempotencyKey
    ) -> LedgerTransaction:
        item = await reverse_transaction(
            info.context, transaction_id=id, idempotency_key=idempotency_key
        )
        return LedgerTransaction.from_item(item)
