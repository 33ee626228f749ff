"""What the commands of issue 3 write, reduced to what the pipeline reads."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from domain.datetimes import format_datetime
from domain.enums import ProductStatus, ScanResult
from domain.identifiers import new_id
from domain.threats import ClaimFacts, ProductFacts
from services.analytics.counters import scan_counter_updates
from services.brands.items import brand_stats_item
from services.pipeline import Pipeline, PipelineSettings, ScanEvent
from services.pipeline.service import outbox_actions
from services.scans.items import SCAN_SORT
from storage import Item, Put, Storage, WriteAction
from storage.access_patterns import BRAND_STATS, BRAND_THREATS, OUTBOX_DUE, PRODUCT_SCANS

CURSOR_KEY = bytes(range(32))
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def utcnow() -> datetime:
    return datetime.now(UTC)


class Product:
    """A product and the scans recorded for it, as verifyProduct writes them."""

    def __init__(
        self, brand_id: str, created_at: datetime, status: ProductStatus = ProductStatus.ACTIVE
    ) -> None:
        self.brand_id = brand_id
        self.id = new_id(created_at)
        self.created_at = created_at
        self.status = status
        self.scans = 0

    def facts(self) -> ProductFacts:
        return ProductFacts(self.id, self.brand_id, self.created_at, self.status, self.scans)

    def scan(
        self,
        at: datetime,
        *,
        country: str | None = None,
        device: str | None = None,
        result: ScanResult = ScanResult.AUTHENTIC,
        claim: ClaimFacts | None = None,
    ) -> tuple[Item, ScanEvent]:
        self.scans += 1
        event = ScanEvent(
            new_id(at), at, result, self.facts(), country=country, device_hash=device, claim=claim
        )
        item = {
            "PK": PRODUCT_SCANS.partition_key.format({"product_id": self.id}),
            "SK": SCAN_SORT.format({"scanned_at": at, "scan_id": event.scan_id}),
            "entity": "Scan",
            "id": event.scan_id,
            "productId": self.id,
            "brandId": self.brand_id,
            "scannedAt": format_datetime(at),
            "result": result.value,
            "country": country,
            "deviceHash": device,
        }
        return item, event


async def new_brand(storage: Storage) -> str:
    brand_id = new_id()
    await storage.transact_write([Put(brand_stats_item(brand_id))])
    return brand_id


def scan_writes(item: Item, event: ScanEvent) -> list[WriteAction]:
    """The scan item and its day counters (AP27, which the relay reads), as
    verifyProduct's transaction writes them; the outbox item is the caller's."""
    return [
        Put(item),
        *scan_counter_updates(
            brand_id=event.brand_id,
            product_id=event.product_id,
            scan_id=event.scan_id,
            scanned_at=event.scanned_at,
            country=event.country,
            result=event.result,
        ),
    ]


async def record_scan(
    storage: Storage, product: Product, at: datetime, pipeline: Pipeline | None = None, **scan: Any
) -> ScanEvent:
    """The scan and its outbox item in one transaction, as verifyProduct commits them."""
    item, event = product.scan(at, **scan)
    writes = scan_writes(item, event)
    if pipeline is None:
        await storage.transact_write([*writes, *outbox_actions(event)])
    else:
        await pipeline.committing(storage).transact_write([*writes, *pipeline.enqueue(event)])
    return event


async def alerts(storage: Storage, brand_id: str) -> list[Item]:
    """Every alert of the brand, newest first."""
    page = await storage.query(
        BRAND_THREATS, {"brand_id": brand_id, "since": EPOCH}, tenant="test", first=100
    )
    return page.items


async def stats(storage: Storage, brand_id: str) -> Item:
    item = await storage.get(BRAND_STATS, brand_id=brand_id)
    assert item is not None
    return item


async def eventually(check: Callable[[], Awaitable[bool]], *, timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not await check():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.01)


def minutes(n: float) -> timedelta:
    return timedelta(minutes=n)


FAR_FUTURE = datetime(9999, 1, 1, tzinfo=UTC)


async def queued(storage: Storage, settings: PipelineSettings) -> list[Item]:
    """Every outbox item still waiting or leased."""
    items: list[Item] = []
    for shard in settings.shards:
        page = await storage.query(
            OUTBOX_DUE, {"shard": shard, "before": FAR_FUTURE}, tenant="test", first=100
        )
        items.extend(page.items)
    return items


class Counting:
    """The store, counting its transactions."""

    def __init__(self, inner: Storage) -> None:
        self.inner = inner
        self.transactions: list[int] = []

    async def transact_write(self, actions: Sequence[WriteAction]) -> None:
        self.transactions.append(len(actions))
        await self.inner.transact_write(actions)
