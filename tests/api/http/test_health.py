from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
from _asgi import connect, running
from starlette.applications import Starlette

from api import __version__
from api import app as app_module
from api.app import create_app
from api.http import health as health_module
from api.settings.gateway import Settings
from storage.access_patterns import HEALTH_PROBE
from storage.protocol import Page
from storage.registry import AccessPattern
from storage.trace import tracing

ADMIN = "health-test-admin-key"


def settings(**options: Any) -> Settings:
    return Settings(cursor_key=bytes(32), admin_key=ADMIN, sqlite_path=":memory:", **options)


class FakeStorage:
    """Stands in for a store that fails or hangs, which a real one will not do on demand."""

    backend = "fake"

    def __init__(self, behaviour: str = "ok") -> None:
        self.behaviour = behaviour
        self.reads: list[str] = []
        self.closed = False

    async def get(self, ap: AccessPattern, /, **params: Any) -> None:
        self.reads.append(ap.id)
        if self.behaviour == "fail":
            raise RuntimeError("disk on fire")
        if self.behaviour == "hang":
            await asyncio.sleep(3600)

    async def query(self, ap: AccessPattern, params: Any, **options: Any) -> Page:
        """Start-up reads the recorded signing keys: there are none."""
        return Page([], False, lambda item: "")

    async def transact_write(self, actions: Any) -> None:
        """Start-up records the signing key."""

    async def close(self) -> None:
        self.closed = True


@pytest.fixture
async def sqlite_app() -> AsyncIterator[Starlette]:
    app = create_app(settings())
    async with app.router.lifespan_context(app):
        yield app


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeStorage:
    storage = FakeStorage()

    async def open_fake(settings: Settings) -> FakeStorage:
        return storage

    monkeypatch.setattr(app_module, "open_storage", open_fake)
    return storage


async def test_health_is_liveness_only(fake: FakeStorage) -> None:
    app = create_app(settings())
    async with running(app) as http:
        fake.behaviour = "fail"
        response = await http.get("/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "version": __version__}
    assert fake.reads == []


async def test_ready_reads_the_probe_with_one_get_item(sqlite_app: Starlette) -> None:
    async with connect(sqlite_app) as http:
        with tracing() as trace:
            response = await http.get("/ready")
    assert response.status_code == 200
    assert response.json() == {"status": "ready", "storage": "sqlite"}
    assert [(c.operation, c.access_pattern) for c in trace.calls] == [("GetItem", HEALTH_PROBE.id)]


async def test_ready_fails_with_503_when_storage_fails(
    fake: FakeStorage, caplog: pytest.LogCaptureFixture
) -> None:
    app = create_app(settings())
    async with running(app) as http:
        fake.behaviour = "fail"
        with caplog.at_level(logging.WARNING, logger="proofgate.api"):
            response = await http.get("/ready")
    assert response.status_code == 503
    assert response.json() == {"status": "unavailable", "storage": "fake"}
    assert "disk on fire" not in response.text
    assert "Readiness probe failed" in caplog.text


async def test_ready_fails_when_storage_hangs(
    fake: FakeStorage, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(health_module, "READY_TIMEOUT_SECONDS", 0.05)
    app = create_app(settings())
    async with running(app) as http:
        fake.behaviour = "hang"
        response = await asyncio.wait_for(http.get("/ready"), timeout=5)
    assert response.status_code == 503


async def test_lifespan_opens_and_closes_storage(fake: FakeStorage) -> None:
    app = create_app(settings())
    async with app.router.lifespan_context(app):
        assert app.state.storage is fake
        assert not fake.closed
    assert fake.closed


async def test_app_keeps_its_settings() -> None:
    configured = settings(port=9999)
    assert create_app(configured).state.settings is configured


async def test_cors_allows_only_configured_origins(fake: FakeStorage) -> None:
    app = create_app(settings(cors_origins=("http://localhost:3000",)))
    preflight = {
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization",
    }
    async with running(app) as http:
        allowed = await http.options(
            "/health", headers={"Origin": "http://localhost:3000", **preflight}
        )
        refused = await http.options(
            "/health", headers={"Origin": "http://evil.example", **preflight}
        )
        simple = await http.get("/health", headers={"Origin": "http://localhost:3000"})
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == "http://localhost:3000"
    assert "authorization" in allowed.headers["access-control-allow-headers"].lower()
    assert refused.status_code == 400
    assert "access-control-allow-origin" not in refused.headers
    assert simple.headers["access-control-allow-origin"] == "http://localhost:3000"


async def test_no_cors_by_default(fake: FakeStorage) -> None:
    app = create_app(settings())
    async with running(app) as http:
        response = await http.get("/health", headers={"Origin": "http://localhost:3000"})
    assert "access-control-allow-origin" not in response.headers
