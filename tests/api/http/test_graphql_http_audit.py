"""graphql-http's audit of GraphQL over HTTP (``auditServer``, the
reference implementation's conformance checks) against a real
``proofgate serve``: every MUST and every SHOULD holds, with the
``Accept`` each audit sends (docs/design.md, Browser clients)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from _live import Gateway
from _node import CLIENTS, npm_ci

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("browser-clients")]


@pytest.fixture(scope="module")
async def gateway(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Gateway]:
    served = await Gateway(tmp_path_factory.mktemp("audit")).start()
    yield served
    await served.stop()


def audit(project: Path, url: str) -> dict[str, object]:
    done = subprocess.run(
        ["node", "audit.mjs"],
        cwd=project,
        env={**os.environ, "GATEWAY_URL": url},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, object] = json.loads(done.stdout)
    return report


def test_the_graphql_http_audit_passes_with_no_warning(gateway: Gateway) -> None:
    report = audit(npm_ci(CLIENTS / "web"), gateway.url)
    assert report["error"] == []
    assert report["warn"] == []
    assert report["ok"] == 61
