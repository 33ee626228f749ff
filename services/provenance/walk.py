"""Reading and checking a product's whole chain (AP09, page after page)."""

from __future__ import annotations

from domain.chain import CHAIN_MAX_EVENTS, ChainReport, verify_chain
from domain.errors import ProofgateError
from storage import Item
from storage.access_patterns import PROVENANCE_CHAIN

from ..context import Reads
from ..paging import read_up_to
from .items import chain_head, event_from_item

__all__ = ["CHAIN_READ_ITEMS", "check_chain", "load_chain"]

CHAIN_READ_ITEMS = CHAIN_MAX_EVENTS + 1
"""The most events ``load_chain`` reads: one past the longest chain, so an
event stored beyond a full chain still shows (docs/design.md, Provenance)."""


async def load_chain(loaders: Reads, product_id: str) -> list[Item]:
    """The chain in order, cut at ``CHAIN_READ_ITEMS`` events: a longer chain
    (stored before chains were capped, or forged) fails ``check_chain`` and
    costs no more to check than a full one."""
    items, _ = await read_up_to(
        loaders, PROVENANCE_CHAIN, {"product_id": product_id}, CHAIN_READ_ITEMS
    )
    return items


def check_chain(product: Item, items: list[Item]) -> ChainReport:
    """Recompute every event's hash and link, and the product's head. A stored
    item that no longer parses as an event is a break, not an error: the
    verdict on a tampered chain is SUSPICIOUS, never a failed request."""
    try:
        events = [event_from_item(item) for item in items]
        head = chain_head(product)
    except (KeyError, TypeError, ValueError, ProofgateError):
        return ChainReport(False, None, "a stored event or the chain head is malformed")
    return verify_chain(product["certificateHash"], events, head=head)
