"""A closed WebSocket's handler, context and connection are freed when it
closes, and the HTTP protocol it was upgraded from when it is upgraded, by
their reference counts, not left in a cycle for a full collection."""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path

import pytest
import uvicorn
from _live import ADMIN_KEY, LEGACY_WS, TRANSPORT_WS, Gateway, Socket, free_port

from api.app import create_app
from api.runtime.http_protocol import OneWriteHttpProtocol
from api.settings.gateway import Settings
from api.ws.connections import LiveConnection

SOCKETS = 10


def _live_connections() -> int:
    return sum(type(o) is LiveConnection for o in gc.get_objects())


def _http_protocols() -> int:
    return sum(type(o) is OneWriteHttpProtocol for o in gc.get_objects())


@pytest.mark.parametrize("protocol", [TRANSPORT_WS, LEGACY_WS])
async def test_closed_sockets_leave_no_connection_behind(tmp_path: Path, protocol: str) -> None:
    settings = Settings(
        cursor_key=bytes(range(32)),
        admin_key=ADMIN_KEY,
        sqlite_path=str(tmp_path / "embedded.db"),
        port=free_port(),
    )
    app = create_app(settings)
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=settings.port,
        log_level="warning",
        http=OneWriteHttpProtocol,
        ws_per_message_deflate=False,
    )
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    gateway = Gateway(tmp_path, port=settings.port)
    gc.collect()
    gc.disable()
    try:
        while not server.started:
            await asyncio.sleep(0.01)
        brand, key = await gateway.brand()
        connections = app.state.graphql.connections
        before, upgraded = _live_connections(), _http_protocols()
        sockets = [await Socket.open(gateway, key, protocol=protocol) for _ in range(SOCKETS)]
        for socket in sockets:
            await socket.subscribe(brand)
        assert _live_connections() == before + SOCKETS
        assert _http_protocols() == upgraded
        for socket in sockets:
            await socket.close()
        async with asyncio.timeout(10):
            while len(connections):
                await asyncio.sleep(0.01)
        del sockets, socket
        assert _live_connections() == before
    finally:
        gc.enable()
        await gateway.stop()
        server.should_exit = True
        await serving
