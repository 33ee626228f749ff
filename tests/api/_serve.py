"""``proofgate serve`` in a subprocess, as a person starts it.

The environment is cleared of ``PROOFGATE_*`` so the gateway generates its
key files into the data directory, as on a fresh machine.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import httpx
from _live import free_port

__all__ = ["Served", "serve"]


@dataclass
class Served:
    url: str
    data_dir: Path
    process: subprocess.Popen[str]
    out: str = ""
    err: str = ""


@contextlib.contextmanager
def serve(
    data_dir: Path, *args: str, env: Mapping[str, str] | None = None, timeout: float = 60
) -> Iterator[Served]:
    """A running gateway; on exit it is stopped and its output captured."""
    port = free_port()
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PROOFGATE_")}
    if os.environ.get("PROOFGATE_TEST_EXECUTION"):  # tests/conftest.py, TEST_EXECUTION
        environ["PROOFGATE_EXECUTION"] = os.environ["PROOFGATE_TEST_EXECUTION"]
    environ.update(env or {})
    command = [str(Path(sys.executable).with_name("proofgate")), "serve"]
    command += ["--port", str(port), "--data-dir", str(data_dir), *args]
    process = subprocess.Popen(
        command, env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    served = Served(f"http://127.0.0.1:{port}", data_dir, process)
    try:
        _wait_for_health(served, timeout)
        yield served
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        try:
            served.out, served.err = process.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            served.out, served.err = process.communicate(timeout=15)


def _wait_for_health(served: Served, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if served.process.poll() is not None:
            raise AssertionError(f"proofgate serve exited early: {served.process.communicate()}")
        try:
            if httpx.get(f"{served.url}/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"proofgate serve did not answer /health within {timeout} s")
