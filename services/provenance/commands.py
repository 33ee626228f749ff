"""addProvenanceEvent: the brand's own keys append to a product's chain."""

from __future__ import annotations

from domain.chain import ProvenanceEvent

from ..context import CommandContext
from .access import writable_product
from .append import append_event
from .drafts import EventDraft, EventFields

__all__ = ["add_event"]


async def add_event(
    context: CommandContext, product_id: str, fields: EventFields
) -> ProvenanceEvent:
    context.principal.require_authenticated()
    draft = EventDraft.validate(fields)
    product = await writable_product(context, product_id)
    appended = await append_event(context, product, draft, operation="addProvenanceEvent")
    return appended.event
