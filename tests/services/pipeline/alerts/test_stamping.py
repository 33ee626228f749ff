"""Late commits: an alert whose transaction lands after other processes'
tailers have read past its ``recordedAt`` is moved forward, so they still
see it (docs/design.md, "Late commits")."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, cast

from domain.datetimes import parse_datetime
from domain.enums import ScanResult
from services.pipeline import Pipeline, PipelineSettings
from storage import CursorCodec, Put, Storage, WriteAction
from storage.sqlite import open_sqlite
from tests.services.pipeline._support import (
    CURSOR_KEY,
    Product,
    alerts,
    new_brand,
    record_scan,
    utcnow,
)

DELAY = 2.5


class SlowAlertCommit:
    """A store whose first alert transaction takes ``DELAY`` seconds, as one
    retried through throttling does."""

    def __init__(self, inner: Storage) -> None:
        self.inner = inner
        self.committing = asyncio.Event()
        self._slowed = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def transact_write(self, actions: Sequence[WriteAction]) -> None:
        alert = any(
            isinstance(action, Put) and action.item.get("entity") == "ThreatAlert"
            for action in actions
        )
        if alert and not self._slowed:
            self._slowed = True
            self.committing.set()
            await asyncio.sleep(DELAY)
        await self.inner.transact_write(actions)


async def test_an_alert_committed_late_still_reaches_other_processes(
    tmp_path: Path, settings: PipelineSettings, t0: datetime
) -> None:
    """A's first alert takes 2.5 s to commit (the overlap is 1 s); meanwhile C
    writes a newer alert, which B's tailer reads, moving its window past the
    first alert's stamp. B's subscriber still gets both."""
    tight = dataclasses.replace(settings, tail_overlap=timedelta(seconds=1), claim_batch=1)
    path = tmp_path / "shared.db"
    stores = [await open_sqlite(path, cursor_key=CURSOR_KEY) for _ in range(3)]
    slow = SlowAlertCommit(stores[0])
    a, b, c = (
        Pipeline(store, tight, cursors=CursorCodec(CURSOR_KEY), clock=utcnow)
        for store in (cast(Storage, slow), stores[1], stores[2])
    )
    await a.start()
    tail = asyncio.create_task(b.tailer.run())
    try:
        brand = await new_brand(stores[0])
        subscriber = await b.subscribe(brand)
        late, prompt = (Product(brand, t0 - timedelta(days=1)) for _ in range(2))
        await record_scan(stores[0], late, t0, a, result=ScanResult.COUNTERFEIT)
        await asyncio.wait_for(slow.committing.wait(), 3)
        await asyncio.sleep(1.2)
        await c.start()
        await record_scan(stores[2], prompt, t0, c, result=ScanResult.COUNTERFEIT)
        received = []
        for _ in range(2):
            item = await asyncio.wait_for(subscriber.next(), DELAY + 2)
            assert item is not None
            received.append(item["productId"])
        assert received == [prompt.id, late.id]
        assert a.relay.alerts.stamper.late == 1 and a.relay.alerts.stamper.stranded == 0
        stored = {item["productId"]: item for item in await alerts(stores[0], brand)}
        moved = parse_datetime(stored[late.id]["recordedAt"])
        assert moved > parse_datetime(stored[prompt.id]["recordedAt"])
    finally:
        tail.cancel()
        await asyncio.gather(tail, return_exceptions=True)
        for pipeline in (a, b, c):
            await pipeline.stop()
        for store in stores:
            await store.close()
