"""When an alert enters AP12 (docs/design.md, "Late commits").

``recordedAt`` is stamped before the transaction that writes the alert, so
that the alert and its counters commit together. A commit that takes longer
than ``commit_budget`` (store retries, throttling, a paused process) lands
behind where tailers on other processes are reading: they would never see
it. So after such a commit the alert is moved forward to a fresh stamp, again
until one move lands within the budget.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from domain.datetimes import parse_datetime
from domain.errors import ConditionFailed
from services.pipeline.alerts.records import restamp
from storage import Item, Storage

__all__ = ["RESTAMP_ATTEMPTS", "Stamper"]

logger = logging.getLogger("proofgate.pipeline")

_MICROSECOND = timedelta(microseconds=1)
RESTAMP_ATTEMPTS = 5


class Stamper:
    def __init__(self, clock: Callable[[], datetime], budget: timedelta) -> None:
        self._clock = clock
        self._budget = budget
        self._last: datetime | None = None
        self.late = 0
        """Alerts whose commit outlasted the budget and were moved forward."""
        self.stranded = 0
        """Alerts that could not be moved within the budget: in the table and
        ``Brand.threats``, but possibly never live on other processes."""

    def stamp(self) -> datetime:
        """Strictly increasing in this process, so AP12 order is commit order here."""
        now = self._clock()
        if self._last is not None and now <= self._last:
            now = self._last + _MICROSECOND
        self._last = now
        return now

    async def visible(self, storage: Storage, item: Item) -> Item:
        """``item``, just committed, as tailers will find it: moved forward if
        its commit came later than the budget allows."""
        for attempt in range(RESTAMP_ATTEMPTS + 1):
            if self._clock() - parse_datetime(item["recordedAt"]) <= self._budget:
                return item
            if attempt == RESTAMP_ATTEMPTS:
                break
            if attempt == 0:
                self.late += 1
            moved, update = restamp(item, self.stamp())
            try:
                await storage.transact_write([update])
            except asyncio.CancelledError:
                raise
            except ConditionFailed:
                logger.warning("Alert %s moved under us; left where it is", item["id"])
                return item
            except Exception:
                logger.warning("Moving late alert %s forward failed", item["id"], exc_info=True)
                continue
            item = moved
        self.stranded += 1
        logger.error(
            "Alert %s committed later than tailers read back (%.1f s) and could not be "
            "moved forward; Brand.threats lists it, live subscribers elsewhere may miss it",
            item["id"],
            self._budget.total_seconds(),
        )
        return item
