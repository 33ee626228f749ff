"""Real clients of the HTTP streams, from Node: Apollo Client (multipart
subscription, @defer) and graphql-sse (resuming after a dropped connection),
against a real ``proofgate serve``. Their packages are pinned by
``tests/clients/streams/package-lock.json``, installed here with ``npm ci``."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from _live import Gateway
from _node import npm_ci

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("stream-clients")]

CLIENTS = Path(__file__).resolve().parents[2] / "clients" / "streams"


@pytest.fixture(scope="session")
def node_clients() -> Path:
    """``npm ci`` once (under a lock, for parallel workers); skipped without Node."""
    return npm_ci(CLIENTS)


@pytest.fixture(scope="module")
async def gateway(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Gateway]:
    served = await Gateway(tmp_path_factory.mktemp("stream-clients")).start()
    yield served
    await served.stop()


class NodeClient:
    """A client script running; its stdout is JSON lines."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    async def start(cls, clients: Path, script: str, **env: str) -> NodeClient:
        process = await asyncio.create_subprocess_exec(
            "node",
            script,
            cwd=clients,
            env={**os.environ, **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        return cls(process)

    async def line(self, timeout: float = 20) -> dict[str, Any]:
        assert self.process.stdout is not None
        raw = await asyncio.wait_for(self.process.stdout.readline(), timeout)
        if not raw:
            assert self.process.stderr is not None
            error = (await self.process.stderr.read()).decode()
            raise AssertionError(f"node exited ({await self.process.wait()}): {error}")
        line: dict[str, Any] = json.loads(raw)
        return line

    async def finish(self) -> dict[str, Any]:
        result = await self.line()
        assert await asyncio.wait_for(self.process.wait(), 10) == 0
        return result


async def test_apollo_client_gets_an_alert_over_multipart_and_a_deferred_fragment(
    gateway: Gateway, node_clients: Path
) -> None:
    brand, key, product, start = await gateway.brand_with_an_alert()
    client = await NodeClient.start(
        node_clients,
        "apollo.mjs",
        GATEWAY_URL=gateway.url,
        API_KEY=key,
        BRAND_ID=brand,
        AFTER=start,
    )
    assert await client.line() == {"subscribed": True}
    await gateway.dispute(product)
    result = await client.finish()
    stored = await gateway.alerts(brand, key)
    assert result["alert"]["id"] == stored[1]["id"]
    assert result["alert"]["type"] == "OWNERSHIP_DISPUTE"
    initial, *_, merged = result["emissions"]
    assert "stats" not in initial["data"]["brand"]  # the initial part, before the deferred one
    assert initial["data"]["brand"]["id"] == brand
    assert merged["data"]["brand"]["stats"]["threatCount"] == 2
    assert merged["loading"] is False


async def test_graphql_sse_resumes_after_a_dropped_connection(
    gateway: Gateway, node_clients: Path
) -> None:
    brand, key, product, start = await gateway.brand_with_an_alert()
    client = await NodeClient.start(
        node_clients,
        "sse.mjs",
        GATEWAY_URL=gateway.url,
        API_KEY=key,
        BRAND_ID=brand,
        AFTER=start,
        COUNT="10",
        CUT_AFTER="3",
    )
    assert await client.line() == {"subscribed": True}
    for _ in range(5):  # the client cuts its connection after the 3rd; two more may be on the way
        await gateway.dispute(product)
    assert await client.line() == {"cut": True}
    for _ in range(5):  # raised while it reconnects, or once it has
        await gateway.dispute(product)
    result = await client.finish()
    stored = (await gateway.alerts(brand, key))[1:]
    assert result["reconnects"] >= 1  # the connection was dropped, and the client came back
    assert result["ids"] == [alert["id"] for alert in stored]
