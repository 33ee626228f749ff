"""Alerts written by other processes, found by tailing AP12.

Only brands with a live subscription here are tailed. Each poll re-reads the
last ``tail_overlap`` before the newest alert seen, because alerts from
several relays become visible slightly out of timestamp order; the broker
drops the ones already passed on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime

from services.pipeline.live.broker import Broker
from services.pipeline.periodic import repeat
from services.pipeline.settings import PipelineSettings
from storage import Item, Storage
from storage.access_patterns import BRAND_THREATS

__all__ = ["PIPELINE_TENANT", "Tailer", "read_alerts_since"]

PIPELINE_TENANT = "pipeline"
_PAGES_MAX = 50


async def read_alerts_since(
    storage: Storage, brand_id: str, since: datetime, *, limit: int
) -> tuple[list[Item], bool]:
    """A brand's alerts recorded at or after ``since``, oldest first, and
    whether ``limit`` cut the read short (the newest ``limit`` are kept)."""
    items: list[Item] = []
    after: str | None = None
    for _ in range(_PAGES_MAX):
        first = min(BRAND_THREATS.max_page, limit + 1 - len(items))
        page = await storage.query(
            BRAND_THREATS,
            {"brand_id": brand_id, "since": since},
            tenant=PIPELINE_TENANT,
            first=first,
            after=after,
        )
        items.extend(page.items)
        if not page.has_next_page or len(items) > limit:
            break
        after = page.end_cursor
    truncated = len(items) > limit
    items = items[:limit]
    items.reverse()
    return items, truncated


class Tailer:
    def __init__(
        self,
        storage: Storage,
        broker: Broker,
        settings: PipelineSettings,
        clock: Callable[[], datetime],
    ) -> None:
        self._storage = storage
        self._broker = broker
        self._settings = settings
        self._clock = clock
        self._priming: dict[str, asyncio.Future[None]] = {}

    async def watch(self, brand_id: str) -> None:
        """Call after the broker registered a subscriber for ``brand_id``:
        alerts already stored are marked seen, so only newer ones go out live.
        Returns only once the brand is primed, or raises: a brand left unprimed
        would never be tailed, and its subscribers would hear nothing from
        other processes. A subscriber that waited on another's priming which
        failed primes the brand itself."""
        while (pending := self._priming.get(brand_id)) is not None:
            await asyncio.shield(pending)
        if self._broker.started(brand_id) is not None:
            return
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._priming[brand_id] = done
        try:
            now = self._clock()
            items, _ = await read_alerts_since(
                self._storage,
                brand_id,
                now - self._settings.tail_overlap,
                limit=self._settings.replay_max,
            )
            self._broker.mark_seen(brand_id, items, now)
        finally:
            done.set_result(None)
            del self._priming[brand_id]

    async def poll(self) -> int:
        """One pass over the watched brands; how many alerts it published."""
        published = 0
        for brand_id in self._broker.watched():
            started = self._broker.started(brand_id)
            if started is None:
                continue
            newest = self._broker.newest(brand_id)
            # Never past this host's own clock: one writer whose clock runs
            # ahead must not move the window past everyone else's alerts.
            reached = min(max(started, newest or started), self._clock())
            since = reached - self._settings.tail_overlap
            items, _ = await read_alerts_since(
                self._storage, brand_id, since, limit=self._settings.replay_max
            )
            published += sum(1 for item in items if self._broker.publish(item))
        return published

    async def run(self) -> None:
        await repeat(
            self.poll, self._settings.tail_interval, failure="Tailing alerts failed; retrying"
        )
