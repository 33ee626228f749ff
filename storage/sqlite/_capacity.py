"""DynamoDB's consumed-capacity arithmetic, so traces cost what production would.

Reads are billed per 4 KB and writes per 1 KB, rounded up, at least one unit;
an eventually consistent read costs half, a transactional write double.
"""

from __future__ import annotations

from ..limits import READ_UNIT_BYTES, WRITE_UNIT_BYTES

__all__ = ["read_units", "write_units"]


def read_units(size: int, consistent: bool) -> float:
    """One GetItem, or one Query's total: a missing item still costs one unit."""
    units = max(1, -(-size // READ_UNIT_BYTES))
    return float(units) if consistent else units / 2


def write_units(size: int, transactional: bool) -> float:
    """``size`` is the larger of the item's old and new images."""
    units = max(1, -(-size // WRITE_UNIT_BYTES))
    return float(2 * units if transactional else units)
