"""create-table and serve against a DynamoDB they cannot use: one line with a
hint, a non-zero exit, nothing printed as ready. (``serve`` against one that
is down waits instead: ``test_serve_outage.py``.)"""

from __future__ import annotations

import socket
import uuid
from pathlib import Path

import pytest

from api.cli.main import main
from api.cli.secrets import init_secrets
from storage.dynamodb import check_table, create_table

REGION = "us-east-1"
_CREDENTIAL_VARIABLES = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SECURITY_TOKEN",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
)


@pytest.fixture
def no_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in _CREDENTIAL_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.fixture
def closed_endpoint(monkeypatch: pytest.MonkeyPatch) -> str:
    """A loopback port nothing listens on, and dummy credentials: the client
    signs a request before it connects, so without them the missing
    credentials would be reported first."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "local")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "local")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def dynamodb_serve(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """``serve`` arguments for a DynamoDB gateway with the fleet's secrets set."""
    for name, value in init_secrets(tmp_path / "fleet").items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PROOFGATE_BACKEND", "dynamodb")
    monkeypatch.setenv("PROOFGATE_AWS_REGION", REGION)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return ["serve", "--host", "127.0.0.1", "--port", str(port)]


def one_line_with_hint(capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    captured = capsys.readouterr()
    assert captured.out == "", "nothing may say the gateway or the table is ready"
    error, hint = captured.err.splitlines()
    assert error.startswith("proofgate: error: ")
    assert hint.startswith("proofgate: hint: ")
    return error, hint


@pytest.mark.usefixtures("no_credentials")
def test_create_table_without_credentials_says_dummy_ones_do_for_an_emulator(
    moto_endpoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    table = f"nocreds-{uuid.uuid4().hex[:8]}"
    args = ["create-table", "--table", table, "--endpoint", moto_endpoint, "--region", REGION]
    assert main(args) == 1
    error, hint = one_line_with_hint(capsys)
    assert "No AWS credentials" in error and moto_endpoint in error
    assert "AWS_ACCESS_KEY_ID" in hint and "dummy" in hint


def test_create_table_at_an_unreachable_endpoint_names_it(
    closed_endpoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["create-table", "--endpoint", closed_endpoint, "--region", REGION]
    assert main(args) == 1
    error, hint = one_line_with_hint(capsys)
    assert error == (
        f"proofgate: error: Cannot reach DynamoDB at {closed_endpoint} (EndpointConnectionError)"
    )
    assert "--endpoint" in hint and "PROOFGATE_DYNAMODB_ENDPOINT" in hint


@pytest.mark.usefixtures("no_credentials")
def test_serve_without_credentials_exits_with_one_line(
    moto_endpoint: str, dynamodb_serve: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*dynamodb_serve, "--endpoint", moto_endpoint]) == 1
    error, hint = one_line_with_hint(capsys)
    assert "No AWS credentials" in error and "dummy" in hint


def test_serve_against_a_missing_table_says_to_create_it(
    moto_endpoint: str,
    dynamodb_serve: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    table = f"missing-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("PROOFGATE_TABLE", table)
    assert main([*dynamodb_serve, "--endpoint", moto_endpoint]) == 1
    error, hint = one_line_with_hint(capsys)
    assert error == f"proofgate: error: DynamoDB table {table} does not exist at {moto_endpoint}"
    assert "proofgate create-table" in hint


async def test_the_check_passes_once_the_table_exists(moto_endpoint: str) -> None:
    """The positive control: the same check, the same endpoint, with the table."""
    table = f"present-{uuid.uuid4().hex[:8]}"
    await create_table(table_name=table, region=REGION, endpoint_url=moto_endpoint)
    await check_table(table_name=table, region=REGION, endpoint_url=moto_endpoint)
