"""A page's WebSocket follows ``PROOFGATE_CORS_ORIGINS``, the list HTTP's CORS
follows: an allowed origin's handshake is acknowledged, any other is refused
with 403 and a log line naming the setting. Against ``proofgate serve``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest
from _serve import serve
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

pytestmark = pytest.mark.slow

ALLOWED = "http://localhost:5173"
OTHER = "http://localhost:5174"


async def handshake(url: str, origin: str) -> dict[str, object]:
    """connection_init from a page on ``origin``: the server's answer."""
    async with connect(
        url.replace("http", "ws") + "/graphql",
        origin=origin,  # type: ignore[arg-type]
        subprotocols=["graphql-transport-ws"],  # type: ignore[list-item]
    ) as socket:
        await socket.send(json.dumps({"type": "connection_init", "payload": {}}))
        answer: dict[str, object] = json.loads(await asyncio.wait_for(socket.recv(), 10))
        return answer


async def test_websocket_origins_follow_the_cors_list(tmp_path: Path) -> None:
    env = {"PROOFGATE_CORS_ORIGINS": f"{ALLOWED},http://127.0.0.1:3000"}
    with serve(tmp_path, env=env) as served:
        assert (await handshake(served.url, ALLOWED))["type"] == "connection_ack"
        with pytest.raises(InvalidStatus) as refused:
            await handshake(served.url, OTHER)
        assert refused.value.response.status_code == 403
        # The same list for HTTP: the preflight of a resuming graphql-sse client.
        preflight = httpx.options(
            f"{served.url}/graphql",
            headers={
                "Origin": ALLOWED,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization,content-type,last-event-id",
            },
        )
        assert preflight.status_code == 200, preflight.text
        assert preflight.headers["access-control-allow-origin"] == ALLOWED
    refusals = [line for line in served.err.splitlines() if "PROOFGATE_CORS_ORIGINS" in line]
    assert len(refusals) == 1, served.err[-2000:]
    assert OTHER in refusals[0]
    assert ALLOWED not in refusals[0]
