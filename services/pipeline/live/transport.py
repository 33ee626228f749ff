"""How alerts written by one process reach subscribers in other processes.

The broker fans an alert out to this process's subscribers; a transport
brings it other processes' alerts. Three exist
(docs/design.md, "Alerts across processes"):

- ``local``: nothing crosses processes (one process, tests, embedding);
- ``table``: the AP12 tail, polling the brands watched here (the default:
  nothing to run besides the table);
- ``redis``: Redis pub/sub, one channel per brand, with the table tail as
  the fallback while Redis is unreachable (``services.pipeline.live.redis_transport``).
"""

from __future__ import annotations

from typing import Protocol

from services.pipeline.live.tailer import Tailer
from storage import Item

__all__ = ["AlertTransport", "LocalTransport", "TableTransport"]


class AlertTransport(Protocol):
    async def run(self) -> None:
        """The background work, until cancelled."""

    async def watch(self, brand_id: str) -> None:
        """The first subscriber of ``brand_id`` arrived: from when this returns,
        alerts other processes write for it reach this process's broker."""

    def unwatch(self, brand_id: str) -> None:
        """The last subscriber of ``brand_id`` left."""

    def announce(self, item: Item) -> None:
        """An alert this process committed, for the other processes; never
        blocks the relay and never raises."""

    async def close(self) -> None: ...


class LocalTransport:
    async def run(self) -> None:
        return None

    async def watch(self, brand_id: str) -> None:
        return None

    def unwatch(self, brand_id: str) -> None:
        return None

    def announce(self, item: Item) -> None:
        return None

    async def close(self) -> None:
        return None


class TableTransport(LocalTransport):
    """Every other process's alerts are in the table: read them there."""

    def __init__(self, tailer: Tailer) -> None:
        self._tailer = tailer

    async def run(self) -> None:
        await self._tailer.run()
