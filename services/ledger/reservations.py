"""Reserving the fee of a batch registration that spans several transactions.

The whole fee is set aside first (``reserved`` rises, ``available`` falls, in
one conditional update), so a batch either can pay for every product or
registers none. Each chunk's transaction then turns its part of the
reservation into postings. Whatever is left when the batch stops (a chunk
failed, the process died) must not stay reserved: ``release`` returns it at
once, and because the process may not live to call it, the reservation
carries an expiry after which ``release_expired`` (``proofgate
release-reservations``) returns it.

The reservation lives on the balance item as ``hold_<id>`` (what it still
holds) and ``holdExpiresAt_<id>``: every settlement and release is a
conditional update of the same item that keeps ``reserved`` equal to the sum
of the holds, with no read-modify-write.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from domain.errors import ConditionFailed, ProofgateError
from domain.identifiers import new_id
from domain.ledger import (
    CREDIT,
    CURRENCY_SCALES,
    build_transaction,
    check_amount,
    registration_fee_lines,
    release_delta,
    reservation_delta,
    transaction_deltas,
)
from storage import Compare, Comparison, Storage, Update, WriteAction
from storage.access_patterns import LEDGER_BALANCE

from ..transact import transact
from .directory import brand_pages
from .fees import fee_transaction_id, ledger_failure
from .items import Hold, TransactionKind, TransactionRecord, holds_of
from .writes import balance_update, record_actions

__all__ = ["RESERVATION_TTL", "FeeReservation", "ReleasedHold", "release_expired", "release_update"]

RESERVATION_TTL = timedelta(minutes=10)
"""Far longer than a batch of 100 takes, short enough that credits a crash
stranded come back the same hour."""

logger = logging.getLogger("proofgate.ledger")


def _epoch(moment: datetime) -> int:
    return int(moment.timestamp())


def release_update(brand_id: str, currency: str, hold: Hold) -> Update:
    """Give back all a hold still holds, if it still holds exactly that."""
    return balance_update(
        release_delta(brand_id, currency, hold.amount),
        remove=(hold.attribute, hold.expiry_attribute),
        conditions=[
            Compare(hold.attribute, Comparison.EQ, hold.amount),
            Compare(hold.expiry_attribute, Comparison.EQ, hold.expires_at),
        ],
    )


class FeeReservation:
    """The open reservation of one batch; ``remaining`` is what it still holds."""

    def __init__(self, brand_id: str, fee: Decimal, hold: Hold, currency: str = CREDIT) -> None:
        self.brand_id = brand_id
        self.fee = fee
        self.currency = currency
        self._hold = hold

    @property
    def hold(self) -> Hold:
        return self._hold

    @property
    def remaining(self) -> Decimal:
        return self._hold.amount

    @classmethod
    async def reserve(
        cls,
        storage: Storage,
        brand_id: str,
        count: int,
        fee: Decimal,
        now: datetime,
        *,
        ttl: timedelta = RESERVATION_TTL,
    ) -> FeeReservation | None:
        """None when there is nothing to pay. INSUFFICIENT_CREDITS when the
        brand cannot pay for the whole batch."""
        fee = check_amount(fee, CREDIT)
        if not registration_fee_lines(brand_id, fee, count=count):
            return None
        total = check_amount(fee * count, CREDIT)
        hold = Hold(new_id(now), total, _epoch(now + ttl))
        update = balance_update(
            reservation_delta(brand_id, CREDIT, total),
            assign={hold.attribute: total, hold.expiry_attribute: hold.expires_at},
        )
        try:
            await transact(storage, [update])
        except ConditionFailed as error:
            raise ledger_failure(error, [update]) or error from None
        return cls(brand_id, fee, hold)

    def settle_actions(self, product_ids: Sequence[str], now: datetime) -> list[WriteAction]:
        """The fee of these products, paid from the reservation: posted and
        reserved fall together, available does not move."""
        lines = registration_fee_lines(self.brand_id, self.fee, count=len(product_ids))
        transaction = build_transaction(
            id=fee_transaction_id(product_ids),
            memo=f"Registration fee for {len(product_ids)} products (reserved)",
            created_at=now,
            lines=lines,
        )
        (delta,) = transaction_deltas(transaction, settle_reserved=True)
        amount = -delta.posted
        hold = self._hold
        if amount == hold.amount:
            update = balance_update(
                delta,
                remove=(hold.attribute, hold.expiry_attribute),
                conditions=[Compare(hold.attribute, Comparison.EQ, amount)],
            )
        else:
            update = balance_update(
                delta,
                add={hold.attribute: -amount},
                conditions=[Compare(hold.attribute, Comparison.GE, amount)],
            )
        record = TransactionRecord(
            self.brand_id, TransactionKind.REGISTRATION_FEE, refs=product_ids
        )
        records = record_actions(transaction, record)
        return [*records, update]

    def settled(self, count: int) -> None:
        """Record that a chunk of ``count`` products committed."""
        paid = check_amount(self.fee * count, self.currency)
        hold = self._hold
        self._hold = Hold(hold.id, hold.amount - paid, hold.expires_at)

    async def release(self, storage: Storage) -> None:
        """Give back what is left. Best effort: on failure the expiry does it."""
        if self._hold.amount <= 0:
            return
        try:
            await transact(storage, [release_update(self.brand_id, self.currency, self._hold)])
        except ConditionFailed:
            logger.info("Reservation %s was already released", self._hold.id)
        except ProofgateError:
            logger.warning(
                "Could not release reservation %s; it expires", self._hold.id, exc_info=True
            )
        else:
            self._hold = Hold(self._hold.id, Decimal(0), self._hold.expires_at)


@dataclass(frozen=True)
class ReleasedHold:
    brand_id: str
    currency: str
    hold: Hold


async def release_expired(storage: Storage, now: datetime) -> list[ReleasedHold]:
    """Release every reservation whose expiry has passed, brand by brand.

    A hold that changed since it was read (its batch settled a chunk at the
    last moment) fails its condition and is left for the next run.
    """
    released: list[ReleasedHold] = []
    currencies = sorted(CURRENCY_SCALES)
    deadline = _epoch(now)
    async for brand_ids in brand_pages(storage):
        params = [{"brand_id": b, "currency": c} for b in brand_ids for c in currencies]
        items = await storage.batch_get(LEDGER_BALANCE, params)
        for param, item in zip(params, items, strict=True):
            brand_id, currency = param["brand_id"], param["currency"]
            for hold in holds_of(item, currency):
                if hold.expires_at > deadline:
                    continue
                try:
                    await transact(storage, [release_update(brand_id, currency, hold)])
                except ConditionFailed:
                    continue
                released.append(ReleasedHold(brand_id, currency, hold))
    return released
