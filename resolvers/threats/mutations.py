"""resolveThreat (a BRAND key of the alert's brand)."""

from __future__ import annotations

import strawberry

from domain.datetimes import format_datetime
from domain.errors import ConditionFailed, NotFound
from domain.threats import parse_alert_id
from services.audit.items import audit_entry
from services.pipeline.alerts import alert_key, alert_key_params
from services.transact import transact
from storage import All, Compare, Comparison, ItemExists, Update
from storage.access_patterns import BRAND_STATS, THREAT_BY_ID

from ..context import Info
from ..fields import mutation_field
from .types import ThreatAlert

__all__ = ["ThreatMutations"]


@strawberry.type
class ThreatMutations:
    @mutation_field(
        reads=THREAT_BY_ID,
        description="Mark an alert resolved. Resolving it again changes nothing: "
        "openThreatCount falls once per alert.",
    )
    async def resolve_threat(self, info: Info, id: strawberry.ID) -> ThreatAlert:
        context = info.context
        key = parse_alert_id(id)
        context.principal.require_write(key.brand_id, "Threat")
        now = context.now()
        params = alert_key_params(key)
        try:
            await transact(
                context.storage,
                [
                    Update(
                        alert_key(key),
                        set={"resolved": True, "resolvedAt": format_datetime(now)},
                        condition=All(ItemExists(), Compare("resolved", Comparison.EQ, False)),
                    ),
                    Update(BRAND_STATS.key(brand_id=key.brand_id), add={"openThreatCount": -1}),
                    audit_entry(
                        context.principal,
                        "resolveThreat",
                        now,
                        brand_id=key.brand_id,
                        target_ids=[key.id],
                    ),
                ],
            )
        except ConditionFailed as error:
            if error.index != 0:
                raise
        context.loaders.forget(THREAT_BY_ID, **params)
        item = await context.loaders.item(THREAT_BY_ID, **params)
        if item is None:
            raise NotFound("Threat not found")
        return ThreatAlert.from_item(item)
