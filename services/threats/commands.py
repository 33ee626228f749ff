"""resolveThreat (a BRAND key of the alert's brand): resolving twice changes
nothing, so openThreatCount falls once per alert."""

from __future__ import annotations

from domain.datetimes import format_datetime
from domain.errors import ConditionFailed, NotFound
from domain.threats import parse_alert_id
from services.pipeline.alerts.records import alert_key, alert_key_params
from storage import All, Compare, Comparison, Item, ItemExists, Update
from storage.access_patterns import BRAND_STATS, THREAT_BY_ID

from ..audit.items import audit_entry
from ..context import CommandContext
from ..transact import transact

__all__ = ["resolve_threat"]


async def resolve_threat(context: CommandContext, alert_id: str) -> Item:
    """The alert as resolving left it."""
    key = parse_alert_id(alert_id)
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
    return item
