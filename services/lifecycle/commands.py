"""transferProduct and recallProduct: status changes that append to the chain.

Each appends its event and sets the status in one transaction, conditional on
the status and chain head it read (see ``provenance.append``): concurrent
calls yield one event and, for a recall, one PRODUCT_RECALL alert. The rules
are ``domain.status``: a recalled product cannot be transferred, and a second
recall is CONFLICT.
"""

from __future__ import annotations

from collections.abc import Sequence

from domain.chain import ProvenanceEvent
from domain.enums import ProductStatus, ProvenanceEventType
from domain.validation import REASON, TRANSFER_TO
from storage import Item

from ..context import CommandContext
from ..pipeline.events import OutboxEvent, RecallEvent
from ..provenance.access import writable_product
from ..provenance.append import append_event
from ..provenance.drafts import EventDraft
from ..provenance.recipients import RECIPIENT, transfer_data

__all__ = ["recall_product", "transfer_product"]


async def transfer_product(
    context: CommandContext, product_id: str, to: str, reason: str | None
) -> Item:
    """The product as the transfer left it."""
    context.principal.require_authenticated()
    recipient = TRANSFER_TO(to, field="to")
    why = REASON.optional(reason, field="reason")
    product = await writable_product(context, product_id)
    data = transfer_data(context.services.hash_salt, recipient, why)
    appended = await append_event(
        context,
        product,
        EventDraft(type=ProvenanceEventType.TRANSFERRED, data=data),
        operation="transferProduct",
        target_status=ProductStatus.TRANSFERRED,
        private={RECIPIENT: recipient},
    )
    return appended.product


async def recall_product(context: CommandContext, product_id: str, reason: str) -> Item:
    """The product as the recall left it."""
    context.principal.require_authenticated()
    why = REASON(reason, field="reason")
    product = await writable_product(context, product_id)

    def recalled(product: Item, event: ProvenanceEvent) -> Sequence[OutboxEvent]:
        return [RecallEvent(product["id"], product["brandId"], event.occurred_at, why)]

    appended = await append_event(
        context,
        product,
        EventDraft(type=ProvenanceEventType.RECALLED, data={"reason": why}),
        operation="recallProduct",
        target_status=ProductStatus.RECALLED,
        extra_events=recalled,
    )
    return appended.product
