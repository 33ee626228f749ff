"""The fan-out client compiled once per run, and a real gateway for it.

Without a C compiler the tests that need the client are skipped, saying so,
as the benchmark skips its fan-out row.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench._fanout_client import CC, build
from bench.alerts import ENV
from tests._support.ports import free_port, serving

KEEPALIVE_MS = 200
"""Short, so the gateway's graphql-transport-ws pings reach the client during a test."""


@pytest.fixture(scope="session")
def fanout_binary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if CC is None:
        pytest.skip(
            "no C compiler (cc, gcc or clang) to build bench/fanout.c; .ci/run installs gcc"
        )
    return build(tmp_path_factory.mktemp("fanout"))


@pytest.fixture(scope="module")
def gateway_port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """``proofgate serve`` with the benchmark's settings (``bench.alerts.ENV``:
    its admin key, no rate limits)."""
    port = free_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith("PROOFGATE_")}
    env.update(ENV, PROOFGATE_WS_KEEPALIVE_MS=str(KEEPALIVE_MS))
    data_dir = tmp_path_factory.mktemp("fanout-gateway")
    command = [sys.executable, "-m", "api.cli.main", "serve", "--port", str(port)]
    command += ["--data-dir", str(data_dir)]
    with serving(command, port, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL):
        yield port
