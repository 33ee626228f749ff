"""IngestEventInput: a provenance event as a partner sends it, with its own id."""

from __future__ import annotations

import strawberry

from ..provenance.inputs import ProvenanceEventInput

__all__ = ["IngestEventInput"]


@strawberry.input(
    description="A partner's event. Name the product by exactly one of productId and code."
)
class IngestEventInput(ProvenanceEventInput):
    event_id: str = strawberry.field(
        description="The partner's own id of the event (printable ASCII, at most 128): "
        "sending it again appends nothing and answers the first receipt"
    )
    product_id: strawberry.ID | None = None
    code: str | None = strawberry.field(
        default=None, description="The verification code printed on the product"
    )
