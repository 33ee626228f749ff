"""threat(id) (AP13)."""

from __future__ import annotations

import strawberry

from domain.errors import NotFound
from domain.threats import parse_alert_id
from services.pipeline.alerts.records import alert_key_params
from storage.access_patterns import THREAT_BY_ID

from ..context import Info
from ..fields import ap_field
from .types import ThreatAlert

__all__ = ["ThreatQueries"]


@strawberry.type
class ThreatQueries:
    @ap_field(THREAT_BY_ID, description="One alert of the caller's brand")
    async def threat(self, info: Info, id: strawberry.ID) -> ThreatAlert:
        key = parse_alert_id(id)
        info.context.principal.require_read(key.brand_id, "Threat")
        item = await info.context.loaders.item(THREAT_BY_ID, **alert_key_params(key))
        if item is None:
            raise NotFound("Threat not found")
        return ThreatAlert.from_item(item)
