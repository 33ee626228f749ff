"""transferProduct and recallProduct: status changes that append to the chain.

Each appends its event and sets the status in one transaction, conditional on
the status and chain head it read (see ``provenance.append``): concurrent
calls yield one event and, for a recall, one PRODUCT_RECALL alert. The rules
are ``domain.status``: a recalled product cannot be transferred, and a second
recall is CONFLICT.
"""

from __future__ import annotations

from collections.abc import Sequence

import strawberry

from domain.canonical import JSONObject
from domain.chain import ProvenanceEvent
from domain.enums import ProductStatus, ProvenanceEventType
from domain.validation import REASON, TRANSFER_TO
from storage import Item
from storage.access_patterns import PRODUCT_BY_ID

from ..context import Info
from ..fields import mutation_field
from ..pipeline_hook import PipelineSignal, ProductRecalled
from ..products.types import Product
from ..provenance.access import writable_product
from ..provenance.append import append_event
from ..provenance.inputs import EventDraft

__all__ = ["LifecycleMutations"]


@strawberry.type
class LifecycleMutations:
    @mutation_field(
        reads=PRODUCT_BY_ID,
        description="Transfer a product to a new owner: appends a TRANSFERRED event and sets "
        "status TRANSFERRED. A recalled product cannot be transferred.",
    )
    async def transfer_product(
        self, info: Info, product_id: strawberry.ID, to: str, reason: str | None = None
    ) -> Product:
        context = info.context
        context.principal.require_authenticated()
        recipient = TRANSFER_TO(to, field="to")
        why = REASON.optional(reason, field="reason")
        product = await writable_product(context, product_id)
        data: JSONObject = {"to": recipient} if why is None else {"to": recipient, "reason": why}
        appended = await append_event(
            context,
            product,
            EventDraft(type=ProvenanceEventType.TRANSFERRED, data=data),
            operation="transferProduct",
            target_status=ProductStatus.TRANSFERRED,
        )
        return Product.from_item(appended.product)

    @mutation_field(
        reads=PRODUCT_BY_ID,
        description="Recall a product: appends a RECALLED event, sets status RECALLED and raises "
        "a PRODUCT_RECALL threat. A recall is final; a second one is CONFLICT.",
    )
    async def recall_product(self, info: Info, product_id: strawberry.ID, reason: str) -> Product:
        context = info.context
        context.principal.require_authenticated()
        why = REASON(reason, field="reason")
        product = await writable_product(context, product_id)

        def recalled(product: Item, event: ProvenanceEvent) -> Sequence[PipelineSignal]:
            return [ProductRecalled(product["brandId"], product["id"], event.occurred_at, why)]

        appended = await append_event(
            context,
            product,
            EventDraft(type=ProvenanceEventType.RECALLED, data={"reason": why}),
            operation="recallProduct",
            target_status=ProductStatus.RECALLED,
            signals=recalled,
        )
        return Product.from_item(appended.product)
