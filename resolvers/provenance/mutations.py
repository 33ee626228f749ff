"""addProvenanceEvent."""

from __future__ import annotations

import strawberry

from services.provenance.access import writable_product
from services.provenance.append import append_event
from services.provenance.drafts import EventDraft
from storage.access_patterns import PRODUCT_BY_ID

from ..context import Info
from ..fields import mutation_field
from .inputs import ProvenanceEventInput
from .types import ProvenanceEvent

__all__ = ["ProvenanceMutations"]


@strawberry.type
class ProvenanceMutations:
    @mutation_field(
        reads=PRODUCT_BY_ID,
        description="Append an event to a product's hash chain (the brand's own keys). "
        "Events are appended in time order; concurrent appends never fork the chain.",
    )
    async def add_provenance_event(
        self, info: Info, product_id: strawberry.ID, input: ProvenanceEventInput
    ) -> ProvenanceEvent:
        context = info.context
        context.principal.require_authenticated()
        draft = EventDraft.validate(input)
        product = await writable_product(context, product_id)
        appended = await append_event(context, product, draft, operation="addProvenanceEvent")
        return ProvenanceEvent.from_event(appended.event)
