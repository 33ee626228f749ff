"""How far behind the outbox is, measured when metrics are scraped.

Read through the relay's own access patterns (AP19 per shard, AP22), so it
costs a few queries per scrape and never a Scan. Counts stop at
``BACKLOG_COUNT_MAX``: past that the operator needs to act, not an exact number
(docs/design.md, "Operations").
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from domain.datetimes import parse_datetime
from services.pipeline.live.tailer import PIPELINE_TENANT
from services.pipeline.settings import PipelineSettings
from storage import AccessPattern, Item, Storage
from storage.access_patterns import OUTBOX_DUE, OUTBOX_PARKED

__all__ = ["BACKLOG_COUNT_MAX", "Backlog", "measure_backlog"]

BACKLOG_COUNT_MAX = 1000
_PAGE = 100
_END_OF_TIME = datetime(9999, 12, 31, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Backlog:
    queued: int
    """Outbox items waiting or leased, up to ``BACKLOG_COUNT_MAX``."""
    parked: int
    """Items that used their attempts, up to ``BACKLOG_COUNT_MAX``."""
    lag_seconds: float
    """How long the oldest claimable item has been due; 0 when none is. A
    leased item is due again only when its lease ends."""


async def measure_backlog(storage: Storage, settings: PipelineSettings, now: datetime) -> Backlog:
    queued, oldest = 0, now
    for shard in settings.shards:
        items = await _count(storage, {"shard": shard, "before": _END_OF_TIME}, OUTBOX_DUE)
        queued += len(items)
        if items:
            oldest = min(oldest, _due(items[0]))
    parked = len(await _count(storage, {}, OUTBOX_PARKED))
    return Backlog(
        queued=min(queued, BACKLOG_COUNT_MAX),
        parked=parked,
        lag_seconds=max(0.0, (now - oldest).total_seconds()),
    )


async def _count(storage: Storage, params: dict[str, object], ap: AccessPattern) -> list[Item]:
    """Up to ``BACKLOG_COUNT_MAX`` items of one partition, in key order."""
    items: list[Item] = []
    after: str | None = None
    while len(items) < BACKLOG_COUNT_MAX:
        page = await storage.query(ap, params, tenant=PIPELINE_TENANT, first=_PAGE, after=after)
        items += page.items
        if not page.has_next_page or not page.items:
            break
        after = page.cursor(len(page.items) - 1)
    return items[:BACKLOG_COUNT_MAX]


def _due(item: Item) -> datetime:
    """The due time in the item's GSI2 sort key, ``DUE#<due>#<id>``."""
    return parse_datetime(str(item["GSI2SK"]).split("#", 2)[1], field="GSI2SK")
