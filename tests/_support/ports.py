"""Loopback ports for the servers tests start."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import httpx


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def serving(
    command: Sequence[str], port: int, *, env: Mapping[str, str], **popen: Any
) -> Iterator[str]:
    """A server process started with ``command`` on ``port``, yielded once its
    ``/health`` answers 200 (at most 30 s), terminated afterwards."""
    process = subprocess.Popen(command, env=env, **popen)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while process.poll() is None and time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        assert process.poll() is None, f"the server exited with {process.returncode}"
        yield url
    finally:
        process.terminate()
        process.wait(10)
