"""The tailer: a brand is followed from the moment its first subscriber's
priming read succeeds, whoever made it."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, cast

import pytest

from domain.enums import ScanResult
from domain.errors import ServiceUnavailable
from services.pipeline import Pipeline, PipelineSettings
from storage import AccessPattern, CursorCodec, Page, Storage
from storage.access_patterns import BRAND_THREATS
from storage.sqlite import open_sqlite
from tests.services.pipeline._support import CURSOR_KEY, Product, new_brand, record_scan, utcnow


class FirstTailReadFails:
    """A store whose first AP12 read waits to be released, then fails."""

    def __init__(self, inner: Storage) -> None:
        self.inner = inner
        self.reading = asyncio.Event()
        self.release = asyncio.Event()
        self._failed = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def query(self, ap: AccessPattern, params: Mapping[str, Any], **options: Any) -> Page:
        if ap is BRAND_THREATS and not self._failed:
            self._failed = True
            self.reading.set()
            await self.release.wait()
            raise ServiceUnavailable("the store is throttling", hint="Retry.")
        return await self.inner.query(ap, params, **options)


async def test_a_subscriber_that_waited_on_a_failed_first_read_primes_the_brand_itself(
    tmp_path: Path, settings: PipelineSettings, t0: datetime
) -> None:
    """Two subscribers arrive together; the first one's priming read fails.
    The first is refused; the second is not left unprimed (and deaf to other
    processes): it reads again and then hears an alert process A writes."""
    path = tmp_path / "shared.db"
    store_a = await open_sqlite(path, cursor_key=CURSOR_KEY)
    store_b = await open_sqlite(path, cursor_key=CURSOR_KEY)
    flaky = FirstTailReadFails(store_b)
    a = Pipeline(store_a, settings, cursors=CursorCodec(CURSOR_KEY), clock=utcnow)
    b = Pipeline(cast(Storage, flaky), settings, cursors=CursorCodec(CURSOR_KEY), clock=utcnow)
    await a.start()
    tail = asyncio.create_task(b.tailer.run())
    try:
        brand = await new_brand(store_a)
        first = asyncio.create_task(b.subscribe(brand))
        await asyncio.wait_for(flaky.reading.wait(), 3)
        second = asyncio.create_task(b.subscribe(brand))
        await asyncio.sleep(0.05)
        assert not second.done(), "the second subscriber waits on the first one's read"
        flaky.release.set()
        with pytest.raises(ServiceUnavailable):
            await first
        subscriber = await asyncio.wait_for(second, 3)
        assert b.broker.started(brand) is not None
        product = Product(brand, t0 - timedelta(days=1))
        await record_scan(store_a, product, t0, a, result=ScanResult.COUNTERFEIT)
        item = await asyncio.wait_for(subscriber.next(), 3)
        assert item is not None and item["brandId"] == brand
        assert b.relay.alerts.created == 0, "it came through the table"
    finally:
        tail.cancel()
        await asyncio.gather(tail, return_exceptions=True)
        await a.stop()
        await b.stop()
        await store_a.close()
        await store_b.close()
