"""Misconfigurations an operator meets, run as the operator runs them: the
``proofgate`` command in a process of its own. Each is one error line and
one hint, exit status 1, no traceback, nothing said as ready."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

PROOFGATE = str(Path(sys.executable).with_name("proofgate"))


def run(*args: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {
        k: v for k, v in os.environ.items() if not k.startswith(("PROOFGATE_", "AWS_PROFILE"))
    }
    environ.update(env or {})
    return subprocess.run(
        [PROOFGATE, *args], env=environ, capture_output=True, text=True, timeout=120
    )


def one_line_with_hint(result: subprocess.CompletedProcess[str]) -> tuple[str, str]:
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout == "", "nothing may say the gateway or the table is ready"
    assert "Traceback" not in result.stderr
    error, hint = result.stderr.splitlines()
    assert error.startswith("proofgate: error: ") and hint.startswith("proofgate: hint: ")
    return error.removeprefix("proofgate: error: "), hint.removeprefix("proofgate: hint: ")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


class _NotFound(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def web_server() -> Iterator[str]:
    """A web server that is not DynamoDB: every POST is 404."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NotFound)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def fleet(tmp_path: Path) -> dict[str, str]:
    """The environment of a DynamoDB process with its secrets."""
    made = run("init-secrets", str(tmp_path / "fleet"))
    assert made.returncode == 0, made.stderr
    secrets = dict(
        line.split("=", 1) for line in made.stdout.splitlines() if line and line[0] != "#"
    )
    return {
        **secrets,
        "PROOFGATE_BACKEND": "dynamodb",
        "AWS_ACCESS_KEY_ID": "local",
        "AWS_SECRET_ACCESS_KEY": "local",
    }


def test_a_profile_that_does_not_exist(tmp_path: Path) -> None:
    env = {
        "AWS_PROFILE": "nope",
        "AWS_CONFIG_FILE": str(tmp_path / "config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "credentials"),
    }
    error, hint = one_line_with_hint(run("create-table", env=env))
    assert "'nope'" in error and "AWS_PROFILE" in hint


def test_an_endpoint_that_is_not_dynamodb(web_server: str, fleet: dict[str, str]) -> None:
    error, hint = one_line_with_hint(run("create-table", "--endpoint", web_server, env=fleet))
    assert error == f"{web_server} does not answer as DynamoDB (CreateTable: HTTP 404)"
    assert "PROOFGATE_DYNAMODB_ENDPOINT" in hint
    served = run("serve", "--port", str(free_port()), "--endpoint", web_server, env=fleet)
    error, _ = one_line_with_hint(served)
    assert error == f"{web_server} does not answer as DynamoDB (GetItem: HTTP 404)"
