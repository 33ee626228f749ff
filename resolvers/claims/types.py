"""The Claim type: when a product was claimed and until when, never by whom."""

from __future__ import annotations

import strawberry

from domain.datetimes import parse_datetime
from services.claims.items import from_epoch
from storage import Item

from ..types.scalars import DateTime

__all__ = ["Claim"]


@strawberry.type(description="A consumer's claim of ownership. The claimant is never revealed.")
class Claim:
    claimed_at: DateTime
    expires_at: DateTime

    @classmethod
    def from_item(cls, item: Item) -> Claim:
        return cls(
            claimed_at=parse_datetime(item["claimedAt"]),
            expires_at=from_epoch(int(item["expiresAt"])),
        )
