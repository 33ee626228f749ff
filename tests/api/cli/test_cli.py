from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import types
import uuid
from pathlib import Path
from typing import Any

import botocore.session  # type: ignore[import-untyped]
import httpx
import pytest

from api.cli.explain import COLUMNS, render_markdown
from api.cli.main import main
from api.graphql.fieldmap import field_map
from api.graphql.schema import schema
from storage.access_patterns import REGISTRY
from storage.table import TABLE

SCHEMA_MODULE = "api.graphql.schema"


def test_explain_lists_every_access_pattern(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain"]) == 0
    lines = capsys.readouterr().out.split("\n\n")[0].splitlines()
    assert lines[0].split()[:3] == list(COLUMNS[:3])
    rows = {line.split()[0]: line for line in lines[2:]}
    assert list(rows) == [ap.id for ap in REGISTRY]
    assert len(rows) == 36
    for ap in REGISTRY:
        row = rows[ap.id]
        for cell in (
            ap.name,
            ap.operation.value,
            ap.index.value,
            ap.partition_key.source,
            ap.entity,
        ):
            assert cell in row
        assert ap.sort_key.describe() in row
        assert ("strong" if ap.consistent else "eventual") in row


def test_explain_markdown_is_the_generated_doc(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "--markdown"]) == 0
    assert capsys.readouterr().out == render_markdown(REGISTRY, field_map(schema, REGISTRY))


def test_export_schema_without_a_schema_fails_clearly(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, SCHEMA_MODULE, None)
    assert main(["export-schema"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert SCHEMA_MODULE in captured.err


def test_export_schema_prints_the_sdl(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    module: Any = types.ModuleType(SCHEMA_MODULE)
    module.schema = types.SimpleNamespace(as_str=lambda: "type Query {\n  health: String!\n}")
    monkeypatch.setitem(sys.modules, SCHEMA_MODULE, module)
    assert main(["export-schema"]) == 0
    assert capsys.readouterr().out == "type Query {\n  health: String!\n}\n"


def test_configuration_errors_name_the_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PROOFGATE_BACKEND", "postgres")
    assert main(["serve", "--data-dir", str(tmp_path / "data")]) == 1
    assert "PROOFGATE_BACKEND" in capsys.readouterr().err
    assert not (tmp_path / "data").exists()


def test_create_table_rejects_a_bad_name_before_any_call(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["create-table", "--table", "x", "--endpoint", "http://127.0.0.1:9"]) == 1
    assert "PROOFGATE_TABLE" in capsys.readouterr().err


def test_create_table(moto_endpoint: str, capsys: pytest.CaptureFixture[str]) -> None:
    name = f"cli-{uuid.uuid4().hex[:8]}"
    args = ["create-table", "--table", name, "--endpoint", moto_endpoint, "--region", "us-east-1"]
    assert main(args) == 0
    assert main(args) == 0, "create-table must be idempotent"
    assert name in capsys.readouterr().out
    client = botocore.session.get_session().create_client(
        "dynamodb",
        endpoint_url=moto_endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    table = client.describe_table(TableName=name)["Table"]
    request = TABLE.create_table_request(name)
    assert table["KeySchema"] == request["KeySchema"]
    assert sorted(i["IndexName"] for i in table["GlobalSecondaryIndexes"]) == ["GSI1", "GSI2"]
    assert table["StreamSpecification"] == request["StreamSpecification"]
    assert table["DeletionProtectionEnabled"] is True
    ttl = client.describe_time_to_live(TableName=name)["TimeToLiveDescription"]
    assert (ttl["TimeToLiveStatus"], ttl["AttributeName"]) == ("ENABLED", TABLE.ttl_attribute)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def test_serve_starts_and_answers_health(tmp_path: Path) -> None:
    port = free_port()
    data_dir = tmp_path / "data"
    script = Path(sys.executable).with_name("proofgate")
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PROOFGATE_")}
    server = subprocess.Popen(
        [
            str(script),
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--data-dir",
            str(data_dir),
        ],
        env=environ,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        response = wait_for_health(f"http://127.0.0.1:{port}", server)
        assert response.json()["status"] == "ok"
        assert httpx.get(f"http://127.0.0.1:{port}/ready").json() == {
            "status": "ready",
            "storage": "sqlite",
        }
    finally:
        server.terminate()
        out, err = server.communicate(timeout=15)
    # uvicorn shuts down cleanly, then re-raises the signal it caught.
    assert server.returncode in (0, -signal.SIGTERM), err
    assert "Application shutdown complete" in err
    admin_key = (data_dir / "admin.key").read_text().strip()
    assert f"http://127.0.0.1:{port}" in out
    # The generated key stays in its file: stdout ends up in log stores.
    assert f"Admin key: kept in {data_dir / 'admin.key'}" in out
    assert admin_key not in out + err
    assert (data_dir / "proofgate.db").exists()


def wait_for_health(url: str, server: subprocess.Popen[str]) -> httpx.Response:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"proofgate serve exited early: {server.communicate()[1]}")
        try:
            return httpx.get(f"{url}/health", timeout=1)
        except httpx.TransportError:
            time.sleep(0.1)
    pytest.fail("proofgate serve did not answer /health within 30 s")


def test_serve_on_a_taken_port_says_so_in_one_line_and_prints_no_banner(
    tmp_path: Path,
) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "api.cli.main", "serve", "--port", str(port)],
            env={**os.environ, "PROOFGATE_DATA_DIR": str(tmp_path)},
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 1
    assert result.stdout == ""
    error, hint = result.stderr.splitlines()
    assert error.startswith(f"proofgate: error: Cannot listen on 127.0.0.1:{port}: ")
    assert hint.startswith("proofgate: hint: ") and "--port" in hint
