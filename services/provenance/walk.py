"""Reading and checking a product's whole chain (AP09, page after page)."""

from __future__ import annotations

from domain.chain import ChainReport, verify_chain
from domain.errors import ProofgateError
from storage import Item
from storage.access_patterns import PROVENANCE_CHAIN

from ..context import Reads
from .items import chain_head, event_from_item

__all__ = ["check_chain", "load_chain"]


async def load_chain(loaders: Reads, product_id: str) -> list[Item]:
    items: list[Item] = []
    after: str | None = None
    while True:
        page = await loaders.page(
            PROVENANCE_CHAIN,
            {"product_id": product_id},
            first=PROVENANCE_CHAIN.max_page,
            after=after,
        )
        items.extend(page.items)
        if not page.has_next_page:
            return items
        after = page.end_cursor


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
