"""GTIN from a SKU, for the product passport's identification block.

A SKU is a GTIN only when it is 8, 12, 13 or 14 digits with a valid GS1
check digit; anything else is a brand's own article number and yields no GTIN,
because a passport must never claim a GS1 identity the product does not have.
"""

from __future__ import annotations

__all__ = ["GTIN_LENGTHS", "gtin_from_sku"]

GTIN_LENGTHS = (8, 12, 13, 14)


def _check_digit(body: str) -> int:
    """GS1: weights 3, 1, 3, ... from the rightmost digit of the body."""
    total = sum(
        int(digit) * (3 if index % 2 == 0 else 1) for index, digit in enumerate(reversed(body))
    )
    return (10 - total % 10) % 10


def gtin_from_sku(sku: str | None) -> str | None:
    """The GTIN-14 (zero-padded) the SKU spells, or None."""
    if sku is None:
        return None
    digits = sku.strip()
    if len(digits) not in GTIN_LENGTHS or not (digits.isascii() and digits.isdigit()):
        return None
    if _check_digit(digits[:-1]) != int(digits[-1]):
        return None
    return digits.zfill(14)
