"""docs/operations.md's laptop recipe, run as written.

Every line runs in bash from a directory laid out like a fresh clone (its
``.venv`` is this one) except two: DynamoDB Local's ``docker run`` (the suite's
moto answers at its address instead) and ``make venv`` (the venv exists).
Ports are moved to free ones; the table gets a name of its own.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests._support.ports import free_port
from tests._support.source import ROOT

pytestmark = pytest.mark.slow

OPERATIONS = ROOT / "docs" / "operations.md"
NOT_RUN = ("docker run ", "make venv")


def recipe() -> list[str]:
    section = OPERATIONS.read_text().split("## DynamoDB on your laptop", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert block is not None
    return block.group(1).splitlines()


def script(lines: list[str], endpoint: str, ports: tuple[int, int]) -> str:
    out = ["set -euo pipefail"]
    for line in lines:
        if line.startswith(NOT_RUN):
            continue
        line = line.replace("http://127.0.0.1:4566", endpoint)
        line = line.replace("--port 8000", f"--port {ports[0]}")
        line = line.replace("--port 8001", f"--port {ports[1]}")
        if line.split("#")[0].rstrip().endswith("&"):
            line = line.split("#")[0].rstrip() + " echo $! >> pids"
        out.append(line)
    return "\n".join(out) + "\n"


def ready(url: str, deadline: float) -> int:
    """``/ready``'s answer once it is 200, or the last one at the deadline: a
    process whose first check of the store ran out of time answers 503 while
    it checks again (docs/design.md, Degraded start)."""
    status = 0
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.TransportError):
            status = httpx.get(f"{url}/ready", timeout=2).status_code
        if status == 200:
            return status
        time.sleep(0.1)
    return status


@pytest.fixture
def clone(tmp_path: Path) -> Iterator[Path]:
    """A directory with ``.venv`` where the recipe expects it; the servers the
    recipe starts in the background are stopped afterwards."""
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))
    yield tmp_path
    pids = tmp_path / "pids"
    started = [int(pid) for pid in pids.read_text().split()] if pids.exists() else []
    for pid in started:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 20
    while started and time.monotonic() < deadline:
        started = [pid for pid in started if _alive(pid)]
        time.sleep(0.1)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_the_recipe_starts_two_processes_on_one_table(moto_endpoint: str, clone: Path) -> None:
    lines = recipe()
    assert [line for line in lines if line.startswith(NOT_RUN)] == [
        lines[0],
        lines[1],
    ], "the recipe's first lines start DynamoDB Local and make the venv"
    assert "amazon/dynamodb-local" in lines[0]
    ports = (free_port(), free_port())
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROOFGATE_", "AWS_"))}
    env["PROOFGATE_TABLE"] = f"laptop-{uuid.uuid4().hex[:8]}"
    log = clone / "log"
    with log.open("w") as output:  # not a pipe: the servers keep it open
        result = subprocess.run(
            ["bash", "-c", script(lines, moto_endpoint, ports)],
            cwd=clone,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            timeout=120,
        )
    assert result.returncode == 0, log.read_text()
    assert len((clone / "pids").read_text().split()) == 2
    deadline = time.monotonic() + 60
    urls = [f"http://127.0.0.1:{port}" for port in ports]
    assert [ready(url, deadline) for url in urls] == [200, 200], log.read_text()
    fleet = dict(
        line.split("=", 1)
        for line in (clone / ".fleet.env").read_text().splitlines()
        if line and not line.startswith("#")
    )
    admin = {"Authorization": f"Bearer {fleet['PROOFGATE_ADMIN_KEY']}"}
    statuses = [httpx.get(f"{url}/metrics", headers=admin, timeout=5).status_code for url in urls]
    assert statuses == [200, 200], "both processes took the shared admin key"
