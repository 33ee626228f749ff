"""A gateway killed with SIGKILL while its relay works loses and duplicates nothing."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from _live import VERIFY, Gateway

from domain.threats import parse_alert_id
from services.pipeline import PipelineSettings
from storage import Storage
from storage.sqlite import open_sqlite
from tests._support.receiver import Receiver
from tests.services.pipeline._support import queued

PRODUCTS = 6
SCANS = 12
LEASE = {"PROOFGATE_OUTBOX_LEASE_SECONDS": "1"}
REGISTER_WEBHOOK = """mutation($b: ID!, $url: String!) {
    registerWebhook(brandId: $b, url: $url) { secret }
}"""
STATS = "query($b: ID!) { brand(id: $b) { stats { threatCount openThreatCount scanCount } } }"


async def unfinished(storage: Storage) -> int:
    return len(await queued(storage, PipelineSettings()))


async def away_from_the_hour() -> None:
    """Twelve scans of a product must share one hourly burst window."""
    now = datetime.now(UTC)
    left = 3600 - (now.minute * 60 + now.second)
    if left < 15:
        await asyncio.sleep(left + 1)


@pytest.mark.slow
async def test_after_a_kill_and_restart_every_scans_alerts_exist_exactly_once(
    tmp_path: Path,
) -> None:
    """The gateway dies with scans in flight and outbox items claimed or
    waiting. After a restart, a product has its BURST_SCAN exactly when
    more than ten of its scans committed, the counters match the alerts, and
    the brand's webhook receives each alert under one delivery id."""
    refusing = True
    async with Receiver(lambda request, attempt: 503 if refusing else 200) as receiver:
        brand, key, products = await _kill_with_outbox_pending(tmp_path, receiver.url)
        store = await open_sqlite(tmp_path / "proofgate.db", cursor_key=bytes(32))
        try:
            assert await unfinished(store) > 0, "the kill left no outbox work to recover"
        finally:
            await store.close()
        refusing = False
        second = await Gateway(tmp_path, **LEASE).start()
        try:
            committed = {
                product["id"]: await _scan_count(second, product["id"], key) for product in products
            }
            expected = sorted(product_id for product_id, count in committed.items() if count > 10)
            await _until_the_outbox_is_empty(tmp_path)
            alerts = await second.alerts(brand, key)
            stats = await second.data(STATS, {"b": brand}, key)
        finally:
            await second.stop()
    assert [alert["type"] for alert in alerts] == ["BURST_SCAN"] * len(expected)
    assert sorted(parse_alert_id(alert["id"]).product_id for alert in alerts) == expected
    assert sorted(_delivered_alerts(receiver)) == sorted(alert["id"] for alert in alerts)
    assert stats["brand"]["stats"] == {
        "threatCount": len(expected),
        "openThreatCount": len(expected),
        "scanCount": sum(committed.values()),
    }


async def _until_the_outbox_is_empty(data_dir: Path) -> None:
    """Every scan's work and every delivery done: nothing can change after."""
    watcher = await open_sqlite(data_dir / "proofgate.db", cursor_key=bytes(32))
    try:
        deadline = time.monotonic() + 15
        while left := await unfinished(watcher):
            assert time.monotonic() < deadline, f"{left} outbox items after 15 s"
            await asyncio.sleep(0.05)
    finally:
        await watcher.close()


def _delivered_alerts(receiver: Receiver) -> list[str]:
    """The alert of each answered delivery, once per ``webhook-id``: a
    receiver that deduplicates by it sees exactly these."""
    by_id = {r.headers["webhook-id"]: r for r in receiver.delivered()}
    return [json.loads(request.body)["alert"]["id"] for request in by_id.values()]


async def _kill_with_outbox_pending(
    data_dir: Path, webhook_url: str
) -> tuple[str, str, list[dict[str, Any]]]:
    first = await Gateway(data_dir, **LEASE).start()
    watcher = await open_sqlite(data_dir / "proofgate.db", cursor_key=bytes(32))
    try:
        brand, key = await first.brand()
        await first.data(REGISTER_WEBHOOK, {"b": brand, "url": webhook_url}, key)
        products = [await first.product(brand, key) for _ in range(PRODUCTS)]
        await away_from_the_hour()
        scans = [
            asyncio.create_task(
                first.execute(
                    VERIFY, {"code": product["verificationCode"], "scan": {"country": "DE"}}
                )
            )
            for _ in range(SCANS)
            for product in products
        ]
        # Most scans in first, so some products pass the burst threshold (ten)
        # and the kill cuts through their alerts' work. A relay that keeps up
        # with the scans still holds their alerts' deliveries, which the
        # receiver refuses: the kill always lands on outbox work.
        while sum(scan.done() for scan in scans) < len(scans) * 5 // 6:
            await asyncio.sleep(0.001)
        deadline = time.monotonic() + 15
        while not await unfinished(watcher):
            assert time.monotonic() < deadline, "no outbox work appeared"
            await asyncio.sleep(0.001)
        first.kill()
        await asyncio.gather(*scans, return_exceptions=True)
    finally:
        await watcher.close()
        await first.stop()
    return brand, key, products


async def _scan_count(gateway: Gateway, product_id: str, key: str) -> int:
    data = await gateway.data(
        "query($id: ID!) { product(id: $id) { scanCount } }", {"id": product_id}, key
    )
    count: int = data["product"]["scanCount"]
    return count
