"""The fee strategy of a registration batch."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from storage import Storage, WriteAction

from ..context import CommandContext
from ..ledger import FeeReservation, charge_actions

__all__ = ["BatchFee"]


class BatchFee:
    """How a batch pays. One that spans transactions reserves its whole fee
    first, so it can never run out of credits half-way, and releases what it
    did not settle; one transaction pays directly."""

    def __init__(self, brand_id: str, fee: Decimal, reservation: FeeReservation | None) -> None:
        self._brand_id = brand_id
        self._fee = fee
        self._reservation = reservation

    @classmethod
    async def choose(
        cls, context: CommandContext, brand_id: str, chunks: int, products: int, now: datetime
    ) -> BatchFee:
        fee = context.services.registration_fee
        reservation = (
            await FeeReservation.reserve(context.storage, brand_id, products, fee, now)
            if chunks > 1
            else None
        )
        return cls(brand_id, fee, reservation)

    def actions(self, product_ids: list[str], now: datetime) -> list[WriteAction]:
        if self._reservation is not None:
            return self._reservation.settle_actions(product_ids, now)
        return charge_actions(self._brand_id, product_ids, now, self._fee)

    def settled(self, count: int) -> None:
        if self._reservation is not None:
            self._reservation.settled(count)

    async def release(self, storage: Storage) -> None:
        if self._reservation is not None:
            await self._reservation.release(storage)
