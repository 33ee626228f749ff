"""From a GS1 Digital Link to the product it names: one key-only read of
AP34 (docs/design.md, GS1 Digital Link)."""

from __future__ import annotations

from domain.gs1 import DigitalLink
from storage import Item
from storage.access_patterns import PRODUCT_BY_GTIN_SERIAL

from ..context import Reads

__all__ = ["resolve_digital_link"]


async def resolve_digital_link(reads: Reads, link: DigitalLink) -> Item | None:
    """The GTIN-and-serial item (product id, code, lot, name), or None: no
    serial (this resolver knows units, not product classes), no such unit,
    or a lot other than the unit's, as a label printed for another batch."""
    if link.serial is None:
        return None
    item = await reads.item(PRODUCT_BY_GTIN_SERIAL, gtin=link.gtin, serial=link.serial)
    if item is None or (link.lot is not None and item.get("lot") != link.lot):
        return None
    return item
