"""From a verification code to the product it is printed on (AP05, then AP04),
and, for the checks, to the product with its claim and chain (AP05, then AP33)."""

from __future__ import annotations

from typing import NamedTuple

from domain.errors import ProofgateError
from domain.identifiers import parse_verification_code
from storage import Item
from storage.access_patterns import PRODUCT_BY_CODE, PRODUCT_BY_ID, PRODUCT_RECORD

from ..context import Reads
from ..paging import read_up_to
from ..provenance.walk import CHAIN_READ_ITEMS, load_chain

__all__ = ["RECORD_READ_ITEMS", "ProductRecord", "product_for_code", "record_for_code"]

RECORD_READ_ITEMS = CHAIN_READ_ITEMS + 2
"""The most items ``record_for_code`` reads through AP33: the claim, one
event past the longest chain, and the product."""

_CLAIM, _EVENT, _META = "CLAIM", "EVENT#", "META"
_MISSING = "A verification code names a product that does not exist"


class ProductRecord(NamedTuple):
    """What the checks read: the product, its chain in order (cut at
    ``CHAIN_READ_ITEMS`` events) and its claim, active or not. A tuple: one
    is made for every verification."""

    product: Item
    chain: list[Item]
    claim: Item | None


async def product_for_code(loaders: Reads, code: str) -> Item | None:
    """None for an unknown code, and for text that cannot be a code at all
    (then nothing is read)."""
    product_id = await _product_id(loaders, code)
    if product_id is None:
        return None
    item = await loaders.item(PRODUCT_BY_ID, product_id=product_id)
    if item is None:
        raise ProofgateError(_MISSING)
    return item


async def record_for_code(loaders: Reads, code: str) -> ProductRecord | None:
    """``product_for_code`` with the claim and the chain, in one Query of the
    product's item collection (docs/design.md, Verify path)."""
    product_id = await _product_id(loaders, code)
    if product_id is None:
        return None
    return await product_record(loaders, product_id)


async def _product_id(loaders: Reads, code: str) -> str | None:
    canonical = parse_verification_code(code)
    if canonical is None:
        return None
    lookup = await loaders.item(PRODUCT_BY_CODE, code=canonical)
    return None if lookup is None else str(lookup["productId"])


async def product_record(loaders: Reads, product_id: str) -> ProductRecord:
    """CLAIM..META of ``PRODUCT#<id>`` (AP33), page after page, split by sort
    key; an item of another kind in that range (a dispute stored before
    disputes moved after META) is skipped. A read cut at
    ``RECORD_READ_ITEMS`` before META is an over-long chain, whose check
    fails whatever follows, or one padded by such items: then the product
    and the chain are read on their own (AP04, AP09), as bounded as before."""
    items, cut = await read_up_to(
        loaders, PRODUCT_RECORD, {"product_id": product_id}, RECORD_READ_ITEMS
    )
    claim, product, chain = _split(items)
    if product is None:
        if not cut:
            raise ProofgateError(_MISSING)
        product = await loaders.item(PRODUCT_BY_ID, product_id=product_id)
        if product is None:
            raise ProofgateError(_MISSING)
        if len(chain) < CHAIN_READ_ITEMS:
            chain = await load_chain(loaders, product_id)
    return ProductRecord(product, chain[:CHAIN_READ_ITEMS], claim)


def _split(items: list[Item]) -> tuple[Item | None, Item | None, list[Item]]:
    claim: Item | None = None
    product: Item | None = None
    chain: list[Item] = []
    for item in items:
        sort_key = item["SK"]
        if sort_key.startswith(_EVENT):
            chain.append(item)
        elif sort_key == _CLAIM:
            claim = item
        elif sort_key == _META:
            product = item
    return claim, product, chain
