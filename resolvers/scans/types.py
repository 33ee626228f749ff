"""The Scan type: what a brand sees of a verification, never who made it."""

from __future__ import annotations

import strawberry

from domain.datetimes import parse_datetime
from domain.enums import ScanResult as ScanResultValue
from storage import Item

from ..types.enums import ScanResult
from ..types.scalars import DateTime

__all__ = ["Scan"]


@strawberry.type(description="One recorded verification of a product")
class Scan:
    id: strawberry.ID
    scanned_at: DateTime
    country: str | None
    city: str | None
    result: ScanResult

    @classmethod
    def from_item(cls, item: Item) -> Scan:
        return cls(
            id=strawberry.ID(item["id"]),
            scanned_at=parse_datetime(item["scannedAt"]),
            country=item.get("country"),
            city=item.get("city"),
            result=ScanResultValue(item["result"]),
        )
