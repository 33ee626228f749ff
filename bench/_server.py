"""Server processes for the HTTP benchmarks, and the loader that drives them.

Each server is its own process on 127.0.0.1 and a free port, started the way
an operator starts it and stopped by its pid; the loader is a third process
(``bench._load``), so neither steals the other's core.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path

from ._load import LoadPlan, LoadResult

__all__ = ["Server", "free_port", "post_json", "redis_serving", "run_load", "serving"]

STARTUP_SECONDS = 30.0
_ROOT = Path(__file__).resolve().parents[1]
"""Where ``python -m bench...`` finds the package, whatever the caller's directory."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class Server:
    def __init__(self, name: str, port: int, process: subprocess.Popen[bytes], log: Path) -> None:
        self.name = name
        self.port = port
        self.process = process
        self.log = log

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _wait_ready(server: Server, probe: str) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            break
        try:
            with urllib.request.urlopen(server.url + probe, timeout=1) as response:
                if response.status == 200:
                    return
        except (OSError, urllib.error.URLError):
            time.sleep(0.1)
    tail = server.log.read_text(errors="replace")[-2000:]
    raise RuntimeError(f"{server.name} did not start on port {server.port}:\n{tail}")


@contextmanager
def serving(
    name: str,
    command: Sequence[str],
    *,
    port: int,
    probe: str,
    log_dir: Path,
    env: Mapping[str, str] | None = None,
) -> Iterator[Server]:
    log = log_dir / f"{name}.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            list(command),
            stdout=output,
            stderr=subprocess.STDOUT,
            cwd=_ROOT,
            env={**os.environ, **(env or {})},
        )
        server = Server(name, port, process, log)
        try:
            _wait_ready(server, probe)
            yield server
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@contextmanager
def redis_serving(log_dir: Path) -> Iterator[str | None]:
    """A redis-server with persistence off, as its URL; None when Debian's
    ``redis-server`` is not installed (the Redis rows are then skipped)."""
    binary = shutil.which("redis-server")
    if binary is None:
        yield None
        return
    port = free_port()
    command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    with (log_dir / "redis.log").open("wb") as output:
        process = subprocess.Popen([*command, "--appendonly", "no"], stdout=output, stderr=output)
        try:
            deadline = time.monotonic() + STARTUP_SECONDS
            while time.monotonic() < deadline:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    time.sleep(0.05)
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            process.terminate()
            process.wait(timeout=10)


def post_json(
    server: Server,
    body: Mapping[str, object],
    headers: Mapping[str, str] | None = None,
    timeout: float = 30,
) -> dict[str, object]:
    """One GraphQL request from the harness itself (set-up and traces)."""
    request = urllib.request.Request(
        server.url + "/graphql",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **(headers or {})},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        result: dict[str, object] = json.load(response)
    if result.get("errors"):
        raise RuntimeError(f"{server.name}: {result['errors']}")
    return result


async def run_load(plan: LoadPlan) -> LoadResult:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bench._load",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        cwd=_ROOT,
    )
    out, _ = await process.communicate(json.dumps(asdict(plan)).encode())
    if process.returncode != 0:
        raise RuntimeError(f"the loader failed (exit {process.returncode})")
    return LoadResult(**json.loads(out))
