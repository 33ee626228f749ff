"""addProvenanceEvent (``services.provenance.commands``)."""

from __future__ import annotations

import strawberry

from services.provenance import commands
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
        event = await commands.add_event(info.context, product_id, input)
        return ProvenanceEvent.from_event(event)
