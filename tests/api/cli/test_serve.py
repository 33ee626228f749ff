"""``proofgate serve``: demo data on start, what it prints, and the serving
hygiene (uvloop, httptools, ``gc.freeze()`` after start-up)."""

from __future__ import annotations

import gc
import importlib.util
import json
import logging
import os
import re
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from _serve import Served, serve

from api.cli import main as cli
from api.demo.loader import DEMO_KEYS_FILE
from api.runtime.gc_freeze import YOUNG_THRESHOLD, FreezeAfterStartup
from api.runtime.http_protocol import LeanHttpProtocol, OneWriteHttpProtocol
from api.settings.limits import Lane, Limits
from api.ws.close_on_shutdown import GoingAwayOnExit
from tests._support.ports import free_port

MAKEFILE = Path(__file__).parents[3] / "Makefile"
BRANDS = "query { brands(first: 50) { edges { node { id name } } } }"
VIEWER = "query { viewer { role brandId } }"


def post(served: Served, query: str, key: str) -> dict[str, Any]:
    response = httpx.post(
        f"{served.url}/graphql",
        json={"query": query},
        headers={"Authorization": f"Bearer {key}"},
        timeout=10,
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    assert "errors" not in body, body
    data: dict[str, Any] = body["data"]
    return data


def make_run_origins() -> str:
    """The CORS origins ``make run`` passes."""
    match = re.search(r"^PROOFGATE_CORS_ORIGINS \?= (.+)$", MAKEFILE.read_text(), re.M)
    assert match is not None
    return match.group(1).replace("$(PORT)", "8000")


@pytest.mark.slow
def test_serve_demo_prints_its_keys_and_a_restart_duplicates_nothing(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    with serve(data_dir, "--demo") as first:
        admin_key = (data_dir / "admin.key").read_text().strip()
        keys = json.loads((data_dir / DEMO_KEYS_FILE).read_text())["brands"]
        brands = post(first, BRANDS, admin_key)["brands"]["edges"]
        assert len(brands) == 2
        aurora = keys["aurora"]
        assert post(first, VIEWER, aurora["api_key"])["viewer"]["brandId"] == aurora["id"]
    assert first.process.returncode in (0, -15), first.err
    for printed in (f"{first.url}/graphql", admin_key, *(k["api_key"] for k in keys.values())):
        assert printed in first.out
    code = re.search(r"Verification code to try: (\S+)", first.out)
    assert code is not None

    with serve(data_dir, "--demo", env={"PROOFGATE_CORS_ORIGINS": make_run_origins()}) as second:
        assert post(second, BRANDS, admin_key)["brands"]["edges"] == brands
        preflight = httpx.options(
            f"{second.url}/graphql",
            headers={
                "Origin": "http://localhost:3000",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization,content-type",
            },
        )
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == "http://localhost:3000"
    assert json.loads((data_dir / DEMO_KEYS_FILE).read_text())["brands"] == keys
    assert aurora["api_key"] in second.out
    assert f"Verification code to try: {code.group(1)}" in second.out


@pytest.mark.slow
def test_make_run_starts_under_enforced_trusted_documents(tmp_path: Path) -> None:
    """``make run`` with ``PROOFGATE_TRUSTED_DOCUMENTS=enforce``: the demo loads
    (its operations are the gateway's own, not a client's) and clients' are gated."""
    data_dir = tmp_path / "data"
    env = {"PROOFGATE_CORS_ORIGINS": make_run_origins(), "PROOFGATE_TRUSTED_DOCUMENTS": "enforce"}
    with serve(data_dir, "--demo", env=env) as served:
        admin_key = (data_dir / "admin.key").read_text().strip()
        assert len(post(served, BRANDS, admin_key)["brands"]["edges"]) == 2
        aurora = json.loads((data_dir / DEMO_KEYS_FILE).read_text())["brands"]["aurora"]
        refused = httpx.post(
            f"{served.url}/graphql",
            json={"query": VIEWER},
            headers={"Authorization": f"Bearer {aurora['api_key']}"},
            timeout=10,
        ).json()
        assert refused["errors"][0]["extensions"]["code"] == "PERSISTED_QUERY_NOT_ALLOWED"
    assert "Verification code to try:" in served.out


@pytest.fixture
def loggers_restored() -> Iterator[None]:
    """``uvicorn.Config`` applies the serve command's logging config to this
    process's loggers; later tests in the worker (those reading ``caplog``
    above all) must find them as they were, or as new ones if they were not."""
    saved = {name: _state(logger) for name, logger in _loggers().items()}
    yield
    for name, logger in _loggers().items():
        level, handlers, propagate, disabled = saved.get(name, (logging.NOTSET, [], True, False))
        logger.setLevel(level)
        logger.handlers[:] = handlers
        logger.propagate, logger.disabled = propagate, disabled


def _loggers() -> dict[str, logging.Logger]:
    loggers = logging.root.manager.loggerDict.items()
    return {"": logging.root} | {n: lg for n, lg in loggers if isinstance(lg, logging.Logger)}


def _state(logger: logging.Logger) -> tuple[int, list[logging.Handler], bool, bool]:
    return logger.level, logger.handlers[:], logger.propagate, logger.disabled


@pytest.mark.usefixtures("loggers_restored")
def test_serve_runs_uvicorn_on_uvloop_and_httptools_and_freezes_after_start(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in list(os.environ):
        if name.startswith("PROOFGATE_"):
            monkeypatch.delenv(name)
    configs: list[uvicorn.Config] = []

    def run(server: uvicorn.Server, sockets: list[socket.socket]) -> None:
        configs.append(server.config)
        for listener in sockets:
            listener.close()

    monkeypatch.setattr("uvicorn.Server.run", run)
    port = str(free_port())
    assert cli.main(["serve", "--data-dir", str(tmp_path / "data"), "--demo", "--port", port]) == 0
    (config,) = configs
    assert isinstance(config.app, FreezeAfterStartup)
    assert isinstance(config.app.app, GoingAwayOnExit)
    assert config.app.app.app.state.settings.demo is True
    # httptools, the common request on a lean cycle (api/runtime/http_protocol.py)
    # when the ``protocol`` lane is on (the default; PROOFGATE_TEST_EXECUTION
    # may turn it off for the whole suite), else one write per response.
    lean = Lane.PROTOCOL in Limits().execution
    protocol = LeanHttpProtocol if lean else OneWriteHttpProtocol
    assert (config.loop, config.http, config.lifespan) == ("uvloop", protocol, "on")
    assert importlib.util.find_spec("uvloop") and importlib.util.find_spec("httptools")


async def test_gc_is_frozen_and_its_young_generation_widened_once_startup_completes() -> None:
    sent: list[dict[str, Any]] = []
    frozen_when_sent: list[int] = []
    messages = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])

    async def receive() -> dict[str, Any]:
        return next(messages)

    async def send(message: Any) -> None:
        sent.append(message)
        frozen_when_sent.append(gc.get_freeze_count())

    async def app(scope: Any, receive: Any, send: Any) -> None:
        assert (await receive())["type"] == "lifespan.startup"
        assert gc.get_freeze_count() == 0, "frozen before start-up finished"
        await send({"type": "lifespan.startup.complete"})
        assert (await receive())["type"] == "lifespan.shutdown"
        await send({"type": "lifespan.shutdown.complete"})

    assert gc.get_freeze_count() == 0
    threshold = gc.get_threshold()
    try:
        await FreezeAfterStartup(app)({"type": "lifespan"}, receive, send)
        assert [m["type"] for m in sent] == [
            "lifespan.startup.complete",
            "lifespan.shutdown.complete",
        ]
        assert frozen_when_sent[0] > 0
        assert gc.get_threshold() == (YOUNG_THRESHOLD, *threshold[1:])
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)


async def test_requests_pass_through_without_freezing() -> None:
    seen: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(scope["type"])

    async def nothing(*_: Any) -> Any:
        raise AssertionError("not called")

    await FreezeAfterStartup(app)({"type": "http"}, nothing, nothing)
    assert seen == ["http"]
    assert gc.get_freeze_count() == 0
