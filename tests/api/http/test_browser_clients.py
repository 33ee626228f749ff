"""Real browser clients, in headless Chromium, on a page served from another
origin than the gateway's (one listed in ``PROOFGATE_CORS_ORIGINS``): urql
with its default exchanges (a query, and a subscription over
``fetchSubscriptions``), Apollo Client 4's ``GraphQLWsLink`` over graphql-ws,
and graphql-sse resuming a stream cut by a proxy between the page and the
gateway, with no gap and no duplicate (docs/design.md, Browser clients).

The clients are pinned by ``tests/clients/web/package-lock.json``, installed
with ``npm ci`` and bundled for the page with esbuild; the gateway is a real
``proofgate serve``. The test waits on what the page reports, never on time.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import shutil
import subprocess
import threading
from collections.abc import AsyncIterator, Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from _chromium import chromium_or_skip, chromium_page
from _live import Gateway
from _node import CLIENTS as ALL_CLIENTS
from _node import npm_ci

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("browser-clients")]

CLIENTS = ALL_CLIENTS / "web"


@pytest.fixture(scope="session")
def bundled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The page and its bundle: ``npm ci`` once (under a lock, for parallel
    workers), then esbuild; skipped without Node."""
    npm_ci(CLIENTS)
    site = tmp_path_factory.mktemp("page")
    shutil.copy(CLIENTS / "index.html", site / "index.html")
    esbuild = CLIENTS / "node_modules" / ".bin" / "esbuild"
    command = [str(esbuild), "page.mjs", "--bundle", "--format=iife", "--platform=browser"]
    command += ["--log-level=warning", f"--outfile={site / 'bundle.js'}"]
    done = subprocess.run(command, cwd=CLIENTS, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return site


@contextlib.contextmanager
def static_site(root: Path) -> Iterator[str]:
    """The page's own origin, ``http://localhost:<port>`` as a dev server's
    (Vite's ``http://localhost:5173``): a static server on a free loopback port."""
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://localhost:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


class CuttableProxy:
    """A TCP proxy to the gateway whose open connections the test can cut,
    as a network drop cuts them; new connections go through again."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.writers: set[asyncio.StreamWriter] = set()
        self.server: asyncio.Server | None = None
        self.cuts = 0

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._connect, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    async def _connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.writers |= {writer, upstream_writer}
        await asyncio.gather(
            self._pump(reader, upstream_writer),
            self._pump(upstream_reader, writer),
            return_exceptions=True,
        )

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while chunk := await reader.read(65536):
                writer.write(chunk)
                await writer.drain()
        finally:
            writer.close()
            self.writers.discard(writer)

    def cut(self) -> None:
        self.cuts += 1
        for writer in list(self.writers):
            writer.transport.abort()

    async def close(self) -> None:
        self.cut()
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()


@pytest.fixture
async def page_and_gateway(
    bundled: Path, tmp_path: Path
) -> AsyncIterator[tuple[Any, Gateway, str]]:
    with static_site(bundled) as origin:
        gateway = await Gateway(tmp_path / "data", PROOFGATE_CORS_ORIGINS=origin).start()
        try:
            async with chromium_page(chromium_or_skip(), tmp_path / "profile") as page:
                await page.send("Page.navigate", url=f"{origin}/index.html")
                await page.wait_for("window.ready === true")
                yield page, gateway, origin
        finally:
            await gateway.stop()


async def state(page: Any) -> dict[str, Any]:
    value: dict[str, Any] = await page.evaluate("JSON.parse(JSON.stringify(window.state))")
    return value


async def test_urql_apollo_ws_and_a_resumed_graphql_sse_stream_from_a_page(
    page_and_gateway: tuple[Any, Gateway, str],
) -> None:
    page, gateway, _ = page_and_gateway
    brand, key, product, start = await gateway.brand_with_an_alert()
    proxy = CuttableProxy(gateway.port)
    through_proxy = await proxy.start()
    config = {"key": key, "brand": brand, "after": start}
    try:
        for client, options in (
            ("urql", {"url": f"{gateway.url}/graphql"}),
            ("apolloOverWebSocket", {"wsUrl": gateway.ws_url}),
            ("sseResuming", {"url": f"{through_proxy}/graphql"}),
        ):
            await page.evaluate(f"window.clients.{client}({json.dumps({**config, **options})})")
        for _ in range(3):
            await gateway.dispute(product)
        await page.wait_for("window.state.sse.ids.length >= 3 || window.state.errors.length")
        proxy.cut()
        for _ in range(8):  # raised while graphql-sse reconnects, or once it has
            await gateway.dispute(product)
        stored = (await gateway.wait_for_alerts(brand, key, 12))[1:]
        assert len(stored) == 11
        await page.wait_for(
            "(window.state.sse.ids.length >= 11 && window.state.urql.alerts.length >= 1"
            " && window.state.apollo.alerts.length >= 1) || window.state.errors.length"
        )
        got = await state(page)
    finally:
        await proxy.close()
    assert got["errors"] == []
    named = {"id": brand, "name": "Live", "__typename": "Brand"}  # urql's cache asks __typename
    assert got["urql"]["query"] == {"data": {"brand": named}, "error": None}
    assert got["urql"]["alerts"][0]["id"] == stored[0]["id"]
    assert got["apollo"]["alerts"][0]["id"] == stored[0]["id"]
    assert got["sse"]["reconnects"] >= 1, "the stream was cut, and the client came back"
    assert got["sse"]["ids"] == [alert["id"] for alert in stored], "no gap, no duplicate"
    cut = "ERR_INCOMPLETE_CHUNKED_ENCODING"  # the stream the proxy cut, as Chromium logs it
    assert [error for error in page.errors() if cut not in error] == []
