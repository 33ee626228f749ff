"""``proofgate serve --workers 2``: two processes on one port, one store."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from _live import ADMIN_KEY, Gateway, Inbox, Socket
from prometheus_client.parser import text_string_to_metric_families

from tests._support.ports import free_port
from tests._support.redis_server import RedisServer

pytestmark = pytest.mark.slow


@pytest.fixture
async def workers(tmp_path: Path) -> AsyncIterator[tuple[Gateway, Path]]:
    """Two workers, talked to through ``Gateway`` (which then starts nothing);
    their metrics directory is the test's, to see which processes counted."""
    port, metrics_dir = free_port(), tmp_path / "metrics"
    metrics_dir.mkdir()
    gateway = Gateway(tmp_path / "data", port=port)
    env = {**gateway.env, "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir)}
    process = subprocess.Popen(
        [sys.executable, "-m", "api.cli.main", "serve", "--workers", "2"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while len(list(metrics_dir.glob("gauge_livesum_*.db"))) < 2:
            assert process.poll() is None and time.monotonic() < deadline, "workers did not start"
            await asyncio.sleep(0.1)
        while (await _health(gateway)) != 200:
            await asyncio.sleep(0.1)
        yield gateway, metrics_dir
    finally:
        process.terminate()
        process.wait(20)
        await gateway.client.aclose()


async def _health(gateway: Gateway) -> int:
    try:
        return (await gateway.client.get("/health")).status_code
    except httpx.TransportError:
        return 0


def _burst(url: str, requests: int) -> None:
    """``requests`` queries from 8 clients at once, so both workers accept."""

    def one(_: int) -> int:
        with httpx.Client(base_url=url) as client:
            return client.post("/graphql", json={"query": "query Ping { __typename }"}).status_code

    with ThreadPoolExecutor(8) as pool:
        assert set(pool.map(one, range(requests))) == {200}


async def test_metrics_add_up_the_requests_of_every_worker(
    workers: tuple[Gateway, Path],
) -> None:
    gateway, metrics_dir = workers
    await asyncio.to_thread(_burst, gateway.url, 80)
    assert len(list(metrics_dir.glob("counter_*.db"))) == 2, "both workers answered"
    scraped = await gateway.client.get("/metrics", headers={"Authorization": f"Bearer {ADMIN_KEY}"})
    pings = [
        sample.value
        for family in text_string_to_metric_families(scraped.text)
        for sample in family.samples
        # An unregistered name sent without a key is counted as "other".
        if sample.name == "proofgate_requests_total" and sample.labels["operation"] == "other"
    ]
    assert pings == [80.0]


async def test_every_subscriber_gets_each_alert_once(workers: tuple[Gateway, Path]) -> None:
    """Disputes sent on fresh connections land on either worker; whichever
    worker holds the subscriber's socket passes each alert on exactly once."""
    gateway, _ = workers
    brand, key = await gateway.brand()
    sockets = [await Socket.open(gateway, key) for _ in range(4)]
    inboxes = [(Inbox(socket), await socket.subscribe(brand)) for socket in sockets]
    # Each worker counts its own when it answers a request: the sum reaches 4
    # once both workers have registered theirs and each has answered since.
    await gateway.wait_for_subscriptions(4)
    product = await gateway.product(brand, key, claimed=True)
    for _ in range(10):
        fresh = Gateway(gateway.data_dir, port=gateway.port)
        await fresh.dispute(product)
        await fresh.client.aclose()
    stored = [alert["id"] for alert in await gateway.wait_for_alerts(brand, key, 10)]
    for inbox, operation in inboxes:
        received = [(await inbox.alert(operation, timeout=5))["id"] for _ in range(10)]
        assert sorted(received) == sorted(stored)
    closing = await gateway.closing_alert(brand, key)
    for inbox, operation in inboxes:
        await inbox.closes_with(operation, closing)
    for socket in sockets:
        await socket.close()


def test_workers_and_demo_do_not_mix(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "api.cli.main", "serve", "--workers", "2", "--demo"],
        env={**os.environ, "PROOFGATE_DATA_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1 and result.stdout == ""
    assert "--workers" in result.stderr.splitlines()[0]


def test_workers_refuse_the_cache_without_a_channel(tmp_path: Path) -> None:
    """A worker whose cache heard only its own writes would serve the
    others' stale (docs/design.md, Cache invalidations across processes)."""
    env = {
        **os.environ,
        "PROOFGATE_DATA_DIR": str(tmp_path),
        "PROOFGATE_CACHE": "on",
        "PROOFGATE_CACHE_CHANNEL": "none",
    }
    result = subprocess.run(
        [sys.executable, "-m", "api.cli.main", "serve", "--workers", "2"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1 and result.stdout == ""
    first, hint = result.stderr.splitlines()[:2]
    assert "PROOFGATE_CACHE_CHANNEL=none" in first and "table or redis" in hint


@pytest.mark.parametrize(
    ("workers", "extra", "named"),
    [("2", {}, "workers"), ("1", {"PROOFGATE_REDIS_URL": "redis://127.0.0.1:1"}, "REDIS_URL")],
)
def test_a_sole_writer_is_one_worker_without_redis(
    tmp_path: Path, workers: str, extra: dict[str, str], named: str
) -> None:
    """docs/design.md, Storage cache, The watermark: the claim is refused
    where another writer is certain (workers) or the channel decides (Redis)."""
    env = {
        **os.environ,
        "PROOFGATE_DATA_DIR": str(tmp_path),
        "PROOFGATE_CACHE": "on",
        "PROOFGATE_CACHE_SOLE_WRITER": "on",
        **extra,
    }
    if workers == "2":
        env["PROOFGATE_REDIS_URL"] = "redis://127.0.0.1:1"  # past the first check
    result = subprocess.run(
        [sys.executable, "-m", "api.cli.main", "serve", "--workers", workers],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1 and result.stdout == ""
    first = result.stderr.splitlines()[0]
    assert "PROOFGATE_CACHE_SOLE_WRITER=on" in first and named in first


@pytest.mark.parametrize("channel", ["redis", "table"])
async def test_workers_with_the_cache_start(
    tmp_path: Path, redis_server: RedisServer, channel: str
) -> None:
    """Through Redis, or with none set through the table's log."""
    redis = {"PROOFGATE_REDIS_URL": redis_server.url} if channel == "redis" else {}
    gateway = Gateway(tmp_path, PROOFGATE_CACHE="on", **redis)
    process = subprocess.Popen(
        [sys.executable, "-m", "api.cli.main", "serve", "--workers", "2"],
        env=gateway.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        async with asyncio.timeout(60):
            while process.poll() is None:
                try:
                    if (await gateway.client.get("/health")).status_code == 200:
                        break
                except httpx.TransportError:
                    await asyncio.sleep(0.05)
        assert process.poll() is None
        brand, key = await gateway.brand()
        assert (await gateway.product(brand, key))["id"]
    finally:
        process.terminate()
        process.wait(30)
        await gateway.client.aclose()
