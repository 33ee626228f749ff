"""Misconfigurations an operator meets: each is one error line and one hint,
exit status 1, nothing said as ready. ``main`` runs in-process (anything but a
``ProofgateError`` would escape it as a traceback and fail the test); the
AWS profile case and the degraded start run ``proofgate`` as a process, as
the operator does."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from api.cli.main import main
from api.cli.secrets import init_secrets
from tests._support.ports import free_port, serving

PROOFGATE = str(Path(sys.executable).with_name("proofgate"))


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("PROOFGATE_") or name == "AWS_PROFILE":
            monkeypatch.delenv(name)


def one_line_with_hint(code: int, capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    captured = capsys.readouterr()
    assert code == 1, captured
    assert captured.out == "", "nothing may say the gateway or the table is ready"
    error, hint = captured.err.splitlines()
    assert error.startswith("proofgate: error: ") and hint.startswith("proofgate: hint: ")
    return error.removeprefix("proofgate: error: "), hint.removeprefix("proofgate: hint: ")


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
def dynamodb_fleet(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name, value in init_secrets(tmp_path / "fleet").items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PROOFGATE_BACKEND", "dynamodb")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "local")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "local")


@pytest.mark.slow
def test_a_profile_that_does_not_exist(tmp_path: Path) -> None:
    """55 lines of botocore before; the count is the operator's ``| wc -l``."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("PROOFGATE_", "AWS_"))},
        "AWS_PROFILE": "nope",
        "AWS_CONFIG_FILE": str(tmp_path / "config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "credentials"),
    }
    result = subprocess.run(
        [PROOFGATE, "create-table"], env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 1 and result.stdout == ""
    error, hint = result.stderr.splitlines()
    assert "'nope'" in error and "AWS_PROFILE" in hint


@pytest.mark.usefixtures("dynamodb_fleet")
def test_an_endpoint_that_is_not_dynamodb(
    web_server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    error, hint = one_line_with_hint(main(["create-table", "--endpoint", web_server]), capsys)
    assert error == f"{web_server} does not answer as DynamoDB (CreateTable: HTTP 404)"
    assert "PROOFGATE_DYNAMODB_ENDPOINT" in hint
    served = main(["serve", "--port", str(free_port()), "--endpoint", web_server])
    error, _ = one_line_with_hint(served, capsys)
    assert error == f"{web_server} does not answer as DynamoDB (GetItem: HTTP 404)"


@pytest.mark.parametrize("command", [["serve"], ["migrate", "--create"]], ids=lambda c: c[0])
def test_a_data_directory_that_cannot_be_made(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    error, hint = one_line_with_hint(main([*command, "--data-dir", "/proc/nope"]), capsys)
    assert error.startswith("Cannot write the key file /proc/nope/") and "--data-dir" in hint


def test_a_backup_into_a_missing_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["migrate", "--create", "--data-dir", str(tmp_path)]) == 0
    capsys.readouterr()
    code = main(["backup", "/missing/dir/x.db", "--data-dir", str(tmp_path)])
    error, hint = one_line_with_hint(code, capsys)
    assert error == "No directory /missing/dir for the backup" and "Create it" in hint


def test_a_host_that_is_not_this_machines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """192.0.2.1 is a documentation address no machine has: binding fails at
    once, and no packet is sent."""
    args = ["serve", "--host", "192.0.2.1", "--port", str(free_port())]
    error, hint = one_line_with_hint(main([*args, "--data-dir", str(tmp_path)]), capsys)
    assert "Cannot assign requested address" in error
    assert "PROOFGATE_HOST" in hint and "Stop what holds the port" not in hint


def test_a_port_in_use_keeps_its_hint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        code = main(["serve", "--port", port, "--data-dir", str(tmp_path)])
    error, hint = one_line_with_hint(code, capsys)
    assert "Address already in use" in error and "Stop what holds the port" in hint


def test_an_unreachable_redis_refuses_to_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PROOFGATE_REDIS_URL", f"redis://user:s3cret@127.0.0.1:{free_port()}/0")
    code = main(["serve", "--port", str(free_port()), "--data-dir", str(tmp_path)])
    error, hint = one_line_with_hint(code, capsys)
    assert error.startswith("Cannot reach Redis at redis://user:***@127.0.0.1:")
    assert "s3cret" not in error and "PROOFGATE_REDIS_START_DEGRADED=1" in hint


@pytest.mark.slow
def test_degraded_start_is_the_operators_choice(tmp_path: Path) -> None:
    """The positive control: the same unreachable Redis, told degraded is fine."""
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PROOFGATE_")},
        "PROOFGATE_REDIS_URL": f"redis://127.0.0.1:{free_port()}/0",
        "PROOFGATE_REDIS_START_DEGRADED": "1",
    }
    command = [PROOFGATE, "serve", "--port", str(port), "--data-dir", str(tmp_path)]
    devnull = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    with serving(command, port, env=env, **devnull) as url:
        assert httpx.get(f"{url}/health", timeout=5).status_code == 200
