"""createIntegration, revokeIntegration and ingestEvent (``services.ingest``)."""

from __future__ import annotations

import strawberry

from domain.enums import IntegrationType
from services import ingest
from storage.access_patterns import INGESTED_EVENT, INTEGRATION_BY_ID

from ..context import Info
from ..fields import mutation_field
from .inputs import IngestEventInput
from .types import CreateIntegrationPayload, IngestReceipt, Integration

__all__ = ["IngestMutations"]


@strawberry.type
class IngestMutations:
    @mutation_field(
        description="A partner integration of the brand and its ingest key (shown once); "
        "the brand's BRAND keys only"
    )
    async def create_integration(
        self, info: Info, brand_id: strawberry.ID, name: str, type: IntegrationType
    ) -> CreateIntegrationPayload:
        created = await ingest.create_integration(info.context, brand_id, name, type)
        return CreateIntegrationPayload(
            integration=Integration.from_item(created.item), ingest_key=created.ingest_key
        )

    @mutation_field(
        reads=INTEGRATION_BY_ID,
        description="Revoke an integration: its key is refused from now on and nothing it "
        "sends is appended. Revoking twice is harmless.",
    )
    async def revoke_integration(self, info: Info, id: strawberry.ID) -> Integration:
        return Integration.from_item(await ingest.revoke_integration(info.context, id))

    @mutation_field(
        reads=INGESTED_EVENT,
        description="Append a partner's event to one of the brand's products (an ingest key "
        "only), with the integration's source. Idempotent on eventId; rate limited per key.",
    )
    async def ingest_event(self, info: Info, input: IngestEventInput) -> IngestReceipt:
        return IngestReceipt.of(await ingest.ingest_event(info.context, input))
