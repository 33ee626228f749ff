"""GTIN from a SKU, for the product passport's identification block.

A SKU is a GTIN only when it is 8, 12, 13 or 14 digits with a valid GS1
check digit; anything else is a brand's own article number and yields no GTIN,
because a passport must never claim a GS1 identity the product does not have.
"""

from __future__ import annotations

from .gs1 import GTIN_LENGTHS, check_digit

__all__ = ["GTIN_LENGTHS", "gtin_from_sku"]


def gtin_from_sku(sku: str | None) -> str | None:
    """The GTIN-14 (zero-padded) the SKU spells, or None."""
    if sku is None:
        return None
    digits = sku.strip()
    if len(digits) not in GTIN_LENGTHS or not (digits.isascii() and digits.isdigit()):
        return None
    if check_digit(digits[:-1]) != int(digits[-1]):
        return None
    return digits.zfill(14)
