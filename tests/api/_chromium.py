"""Headless Chromium driven over the DevTools protocol, for the explorer test.

A small client over ``websockets`` rather than a browser-automation package:
the test needs only navigate, evaluate, screenshot and the network log.
Chromium is Debian's ``chromium`` package; it talks to 127.0.0.1 only.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import os
import shutil
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--window-size=1400,900",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
)


def chromium_or_skip() -> str:
    """The browser's path. Absent, the test skips on a developer's machine but
    fails under CI, which must install it (.ci/run does)."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        reason = "Chromium is not installed (Debian: apt-get install chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; CI must run this test")
        pytest.skip(reason)
    return path


class Page:
    """One tab, attached with a flat session over the browser's socket."""

    def __init__(self, connection: ClientConnection, session: str) -> None:
        self._connection = connection
        self.session = session
        self.events: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        return await self._call(method, params, self.session)

    async def _call(
        self, method: str, params: dict[str, Any], session: str | None
    ) -> dict[str, Any]:
        message_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[message_id] = future
        message: dict[str, Any] = {"id": message_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        await self._connection.send(json.dumps(message))
        reply = await asyncio.wait_for(future, 30)
        if "error" in reply:
            raise AssertionError(f"{method}: {reply['error']}")
        result: dict[str, Any] = reply.get("result", {})
        return result

    async def read_forever(self) -> None:
        async for raw in self._connection:
            message = json.loads(raw)
            future = self._pending.pop(message.get("id", -1), None)
            if future is not None and not future.done():
                future.set_result(message)
            elif "method" in message:
                self.events.append(message)

    async def evaluate(self, expression: str) -> Any:
        result = await self.send(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise AssertionError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    async def wait_for(self, expression: str, timeout: float = 30) -> Any:
        """The first truthy value of ``expression``, polled."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = await self.evaluate(expression)
            if value:
                return value
            await asyncio.sleep(0.1)
        raise AssertionError(f"timed out waiting for {expression}")

    async def screenshot(self, path: Path) -> Path:
        shot = await self.send("Page.captureScreenshot", format="png")
        path.write_bytes(base64.b64decode(shot["data"]))
        return path

    def requested_urls(self) -> list[str]:
        return [
            event["params"]["request"]["url"]
            for event in self.events
            if event["method"] == "Network.requestWillBeSent"
        ]

    def errors(self) -> list[str]:
        found = []
        for event in self.events:
            if event["method"] == "Runtime.exceptionThrown":
                found.append(json.dumps(event["params"]["exceptionDetails"])[:500])
            elif (
                event["method"] == "Log.entryAdded" and event["params"]["entry"]["level"] == "error"
            ):
                found.append(event["params"]["entry"]["text"])
            elif (
                event["method"] == "Runtime.consoleAPICalled" and event["params"]["type"] == "error"
            ):
                found.append(json.dumps(event["params"]["args"])[:500])
        return found


@contextlib.asynccontextmanager
async def chromium_page(executable: str, profile: Path) -> AsyncIterator[Page]:
    """A blank page with the network, log and runtime domains enabled, so
    every request the page makes from its first navigation is seen."""
    browser = subprocess.Popen(
        [executable, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "about:blank"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    reader: asyncio.Task[None] | None = None
    try:
        endpoint = await _devtools_endpoint(profile / "DevToolsActivePort", browser)
        async with connect(endpoint, max_size=None) as connection:
            page = Page(connection, session="")
            reader = asyncio.create_task(page.read_forever())
            targets = await page.send("Target.getTargets")
            target = next(t for t in targets["targetInfos"] if t["type"] == "page")
            attached = await page.send(
                "Target.attachToTarget", targetId=target["targetId"], flatten=True
            )
            page.session = attached["sessionId"]
            for domain in ("Page", "Runtime", "Network", "Log"):
                await page.send(f"{domain}.enable")
            yield page
    finally:
        if reader is not None:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader
        browser.terminate()
        try:
            browser.wait(10)
        except subprocess.TimeoutExpired:
            browser.kill()
            browser.wait(10)


async def _devtools_endpoint(port_file: Path, browser: subprocess.Popen[bytes]) -> str:
    """Chromium writes the port it chose, and the browser target's path, here."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if browser.poll() is not None:
            raise AssertionError(f"chromium exited with {browser.returncode}")
        with contextlib.suppress(FileNotFoundError, ValueError):
            port, path = port_file.read_text().split()
            return f"ws://127.0.0.1:{int(port)}{path}"
        await asyncio.sleep(0.05)
    raise AssertionError("chromium did not open its DevTools port")
