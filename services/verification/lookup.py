"""From a verification code to the product it is printed on (AP05, then AP04)."""

from __future__ import annotations

from domain.errors import ProofgateError
from domain.identifiers import parse_verification_code
from storage import Item
from storage.access_patterns import PRODUCT_BY_CODE, PRODUCT_BY_ID

from ..context import Reads

__all__ = ["product_for_code"]


async def product_for_code(loaders: Reads, code: str) -> Item | None:
    """None for an unknown code, and for text that cannot be a code at all
    (then nothing is read)."""
    canonical = parse_verification_code(code)
    if canonical is None:
        return None
    lookup = await loaders.item(PRODUCT_BY_CODE, code=canonical)
    if lookup is None:
        return None
    item = await loaders.item(PRODUCT_BY_ID, product_id=lookup["productId"])
    if item is None:
        raise ProofgateError("A verification code names a product that does not exist")
    return item
