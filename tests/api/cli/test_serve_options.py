"""``proofgate serve``'s proxy options, and the app factory for other ASGI
servers, on real processes."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from _asgi import answer as without_extensions

from tests._support.ports import free_port, serving

VERIFY = 'mutation { verifyProduct(code: "AAAA-AAAA-AAAA") { result } }'


@contextmanager
def running(command: Sequence[str], data_dir: Path, port: int) -> Iterator[str]:
    env = {
        **os.environ,
        "PROOFGATE_DATA_DIR": str(data_dir),
        "PROOFGATE_PORT": str(port),
        "PROOFGATE_RATE_LIMIT": "1",
        "PROOFGATE_RATE_BURST": "1",
    }
    with serving(
        command, port, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    ) as url:
        yield url


def verify_from(url: str, address: str) -> int:
    response = httpx.post(
        f"{url}/graphql", json={"query": VERIFY}, headers={"X-Forwarded-For": address}
    )
    return response.status_code


@pytest.mark.parametrize("proxy_headers", [True, False])
def test_forwarded_addresses_are_believed_only_with_proxy_headers(
    tmp_path: Path, proxy_headers: bool
) -> None:
    """Two clients behind one local proxy: each has its own rate-limit bucket
    when the proxy's X-Forwarded-For is believed, and they share one when not."""
    port = free_port()
    flag = "--proxy-headers" if proxy_headers else "--no-proxy-headers"
    command = [
        sys.executable,
        "-m",
        "api.cli.main",
        "serve",
        flag,
        "--forwarded-allow-ips",
        "127.0.0.1",
    ]
    with running(command, tmp_path, port) as url:
        assert verify_from(url, "203.0.113.1") == 200
        second = verify_from(url, "203.0.113.2")
    assert second == (200 if proxy_headers else 429)


def test_a_bad_forwarded_allow_ips_is_one_line(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "api.cli.main", "serve", "--forwarded-allow-ips", "10.0.0.300"],
        env={**os.environ, "PROOFGATE_DATA_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert "PROOFGATE_FORWARDED_ALLOW_IPS" in result.stderr.splitlines()[0]


def test_uvicorn_serves_the_app_factory(tmp_path: Path) -> None:
    port = free_port()
    factory = "api.app:from_environment"
    command = [sys.executable, "-m", "uvicorn", "--factory", factory, "--port", str(port)]
    with running(command, tmp_path, port) as url:
        response = httpx.post(f"{url}/graphql", json={"query": "{ health { status } }"})
    assert without_extensions(response.json()) == {"data": {"health": {"status": "ok"}}}
