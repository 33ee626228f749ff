"""A gateway killed with SIGKILL while its relay works loses and duplicates nothing."""

from __future__ import annotations

import asyncio
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
from tests.services.pipeline._support import queued

PRODUCTS = 6
SCANS = 12
LEASE = {"PROOFGATE_OUTBOX_LEASE_SECONDS": "1"}
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
    more than ten of its scans committed, and the counters match the alerts."""
    # The kill must land while outbox work is pending, or recovery is never
    # exercised: it lands the moment a reader of the same file sees an item
    # the relay has not finished. A relay that finished it in between wins
    # the race; the run then starts over in a fresh store.
    for attempt in range(5):
        data_dir = tmp_path / f"attempt-{attempt}"
        data_dir.mkdir()
        brand, key, products = await _kill_with_outbox_pending(data_dir)
        store = await open_sqlite(data_dir / "proofgate.db", cursor_key=bytes(32))
        try:
            left_over = await unfinished(store)
        finally:
            await store.close()
        if left_over:
            break
    assert left_over > 0, "the relay had finished before every kill; nothing was recovered"

    second = await Gateway(data_dir, **LEASE).start()
    try:
        committed = {
            product["id"]: await _scan_count(second, product["id"], key) for product in products
        }
        expected = sorted(product_id for product_id, count in committed.items() if count > 10)
        deadline = time.monotonic() + 15
        while len(alerts := await second.alerts(brand, key)) < len(expected):
            assert time.monotonic() < deadline, alerts
            await asyncio.sleep(0.1)
        await asyncio.sleep(1.5)
        alerts = await second.alerts(brand, key)
        stats = await second.data(STATS, {"b": brand}, key)
    finally:
        await second.stop()
    assert [alert["type"] for alert in alerts] == ["BURST_SCAN"] * len(expected)
    assert sorted(parse_alert_id(alert["id"]).product_id for alert in alerts) == expected
    assert stats["brand"]["stats"] == {
        "threatCount": len(expected),
        "openThreatCount": len(expected),
        "scanCount": sum(committed.values()),
    }


async def _kill_with_outbox_pending(data_dir: Path) -> tuple[str, str, list[dict[str, Any]]]:
    first = await Gateway(data_dir, **LEASE).start()
    watcher = await open_sqlite(data_dir / "proofgate.db", cursor_key=bytes(32))
    try:
        brand, key = await first.brand()
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
        # and the kill cuts through their alerts' work.
        while sum(scan.done() for scan in scans) < len(scans) * 5 // 6:
            await asyncio.sleep(0.001)
        while not all(scan.done() for scan in scans) and not await unfinished(watcher):
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
