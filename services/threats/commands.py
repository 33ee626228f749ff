"""resolveThreat (a BRAND key of the alert's brand): resolving twice changes
nothing, so openThreatCount falls once per alert."""

from __future__ import annotations

from domain.datetimes import format_datetime
from domain.errors import NotFound
from domain.threats import parse_alert_id
from services.pipeline.alerts.records import alert_key, alert_key_params
from storage import Compare, Comparison, Item, Update
from storage.access_patterns import BRAND_STATS, THREAT_BY_ID

from ..audit.marks import mark_once
from ..context import CommandContext

__all__ = ["resolve_threat"]


async def resolve_threat(context: CommandContext, alert_id: str) -> Item:
    """The alert as resolving left it."""
    key = parse_alert_id(alert_id)
    context.principal.require_write(key.brand_id, "Threat")
    now = context.now()
    params = alert_key_params(key)
    await mark_once(
        context,
        alert_key(key),
        mark={"resolved": True, "resolvedAt": format_datetime(now)},
        unmarked=Compare("resolved", Comparison.EQ, False),
        action="resolveThreat",
        brand_id=key.brand_id,
        target_id=key.id,
        now=now,
        along=[Update(BRAND_STATS.key(brand_id=key.brand_id), add={"openThreatCount": -1})],
    )
    context.loaders.forget(THREAT_BY_ID, **params)
    item = await context.loaders.item(THREAT_BY_ID, **params)
    if item is None:
        raise NotFound("Threat not found")
    return item
