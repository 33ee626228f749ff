"""``proofgate migrate`` and the start-up check, as an operator meets them:
a build that expects version 2 (the fake step) refuses a version-1 store in
one line naming the command, ``migrate --dry-run`` shows the plan and
changes nothing, ``migrate`` runs it, and a store newer than the build stops
``serve`` before it binds, without a traceback."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from api.cli.main import main
from api.cli.secrets import init_secrets
from api.runtime.backend import check_storage, open_storage
from api.settings.gateway import Settings
from services.migrations import StoreState, read_state
from services.migrations import steps as migration_steps
from services.migrations.state import version_item
from storage import Put, Storage
from tests._support.migrations import FakeStep, shapes, write_brand_entries
from tests._support.ports import free_port

REGION = "us-east-1"


@pytest.fixture
def environ(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in list(os.environ):
        if name.startswith("PROOFGATE_"):
            monkeypatch.delenv(name)
    yield


def refusal(capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    captured = capsys.readouterr()
    assert captured.out == "", "nothing may say the gateway is up"
    error, hint = captured.err.splitlines()
    return error, hint


async def _store_at_baseline(settings: Settings, brands: int) -> list[str]:
    storage = await open_storage(settings)  # a new store, stamped by this build: version 1
    try:
        assert await read_state(storage) == StoreState(1)
        return await write_brand_entries(storage, brands)
    finally:
        await storage.close()


async def _state_and_shapes(settings: Settings) -> tuple[StoreState, dict[str, object]]:
    storage = await open_storage(settings, current=False)
    try:
        return await read_state(storage), await shapes(storage)
    finally:
        await storage.close()


@pytest.mark.usefixtures("environ")
def test_an_older_embedded_store_is_migrated_after_a_dry_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = str(tmp_path / "data")
    settings = Settings.from_env({"PROOFGATE_DATA_DIR": data})
    keys = asyncio.run(_store_at_baseline(settings, 3))
    fake = FakeStep()
    monkeypatch.setattr(migration_steps, "STEPS", (fake.step(),))

    serve = ["serve", "--data-dir", data, "--port", str(free_port())]
    assert main(serve) == 1
    assert refusal(capsys) == (
        "proofgate: error: The store is at version 1; this build expects version 2",
        "proofgate: hint: Run `proofgate migrate` (docs/operations.md, 'Upgrades').",
    )

    assert main(["migrate", "--dry-run", "--data-dir", data]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "The store is at version 1; this build expects version 2. Steps:",
        "  to version 2: give every brand index entry shape 2",
        "Dry run: nothing changed. Run without --dry-run to migrate.",
    ]
    assert not fake.rewritten
    assert asyncio.run(_state_and_shapes(settings)) == (StoreState(1), dict.fromkeys(keys))

    assert main(["migrate", "--data-dir", data]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2:] == ["  to version 2: done (3 items)", "The store is at version 2."]
    assert asyncio.run(_state_and_shapes(settings)) == (StoreState(2), dict.fromkeys(keys, 2))
    asyncio.run(check_storage(settings))  # serve would start now

    assert main(["migrate", "--data-dir", data]) == 0
    assert capsys.readouterr().out == (
        "The store is at version 2, as this build expects: nothing to do.\n"
    )
    assert sum(fake.rewritten.values()) == 3


async def _stamp(settings: Settings, version: int) -> None:
    storage = await open_storage(settings, current=False)
    try:
        await storage.transact_write([Put(version_item(version, datetime.now(UTC)))])
    finally:
        await storage.close()


@pytest.mark.usefixtures("environ")
def test_serve_on_a_newer_embedded_store_exits_with_one_line(tmp_path: Path) -> None:
    data = tmp_path / "data"
    asyncio.run(_stamp(Settings.from_env({"PROOFGATE_DATA_DIR": str(data)}), 7))
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PROOFGATE_")}
    script = Path(sys.executable).with_name("proofgate")
    port = str(free_port())
    served = subprocess.run(
        [str(script), "serve", "--data-dir", str(data), "--host", "127.0.0.1", "--port", port],
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert served.returncode == 1
    assert served.stdout == ""
    assert served.stderr.splitlines() == [
        "proofgate: error: The store is at version 7, newer than this build "
        "(which reads version 1)",
        "proofgate: hint: Upgrade proofgate to a build that reads version 7; "
        "a store is never migrated backwards.",
    ]


@pytest.fixture
def dynamodb_fleet(
    environ: None, moto_endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Settings:
    for name, value in init_secrets(tmp_path / "fleet").items():
        monkeypatch.setenv(name, value)
    table = f"migrate-cli-{uuid.uuid4().hex[:8]}"
    for name, value in {
        "PROOFGATE_BACKEND": "dynamodb",
        "PROOFGATE_TABLE": table,
        "PROOFGATE_AWS_REGION": REGION,
    }.items():
        monkeypatch.setenv(name, value)
    return Settings.from_env({**os.environ, "PROOFGATE_DYNAMODB_ENDPOINT": moto_endpoint})


async def _write_entries(settings: Settings, brands: int) -> list[str]:
    storage: Storage = await open_storage(settings)
    try:
        return await write_brand_entries(storage, brands)
    finally:
        await storage.close()


def test_a_dynamodb_table_is_stamped_refused_and_migrated(
    dynamodb_fleet: Settings,
    moto_endpoint: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    endpoint = ["--endpoint", moto_endpoint]
    assert main(["create-table", *endpoint]) == 0
    keys = asyncio.run(_write_entries(dynamodb_fleet, 5))
    assert main(["create-table", *endpoint]) == 0, "an existing table is not stamped again"
    assert asyncio.run(_state_and_shapes(dynamodb_fleet)) == (StoreState(1), dict.fromkeys(keys))
    capsys.readouterr()

    fake = FakeStep()
    monkeypatch.setattr(migration_steps, "STEPS", (fake.step(),))
    assert main(["serve", *endpoint, "--port", str(free_port())]) == 1
    error, hint = refusal(capsys)
    assert error == "proofgate: error: The store is at version 1; this build expects version 2"
    assert "proofgate migrate" in hint

    assert main(["migrate", *endpoint]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line for line in lines if "items done" in line] == [
        "  to version 2: 2 items done",
        "  to version 2: 4 items done",
        "  to version 2: 5 items done",
    ]
    assert asyncio.run(_state_and_shapes(dynamodb_fleet)) == (StoreState(2), dict.fromkeys(keys, 2))


def test_migrate_names_a_missing_table(
    dynamodb_fleet: Settings, moto_endpoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["migrate", "--endpoint", moto_endpoint]) == 1
    error, hint = refusal(capsys)
    assert error.startswith(f"proofgate: error: DynamoDB table {dynamodb_fleet.table} does not")
    assert "create-table" in hint


@pytest.mark.usefixtures("environ")
def test_an_embedded_file_laid_out_by_a_newer_build_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    with sqlite3.connect(data / "proofgate.db") as connection:
        connection.execute("PRAGMA user_version = 9")
    connection.close()
    assert main(["serve", "--data-dir", str(data), "--port", str(free_port())]) == 1
    error, hint = refusal(capsys)
    assert error == (
        f"proofgate: error: The SQLite store {data / 'proofgate.db'} has layout version 9, "
        "newer than this build's (2)"
    )
    assert hint.startswith("proofgate: hint: Upgrade proofgate to a build that reads it")
    assert main(["migrate", "--data-dir", str(data)]) == 1, "migrate does not touch it either"
    assert refusal(capsys)[0] == error


@pytest.mark.usefixtures("environ")
def test_ctrl_c_during_migrate_is_one_line_and_the_next_run_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = str(tmp_path / "data")
    settings = Settings.from_env({"PROOFGATE_DATA_DIR": data})
    keys = asyncio.run(_store_at_baseline(settings, 5))
    fake = FakeStep(fail_after_pages=2, interruption=KeyboardInterrupt)
    monkeypatch.setattr(migration_steps, "STEPS", (fake.step(),))

    assert main(["migrate", "--data-dir", data]) == 130
    captured = capsys.readouterr()
    assert captured.err == "proofgate: interrupted: run `proofgate migrate` again to resume\n"
    assert captured.out.splitlines()[-1] == "  to version 2: 4 items done"

    assert main(["migrate", "--data-dir", data]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "  to version 2: give every brand index entry shape 2 (resumes after 4 items)" in out
    assert out[-2:] == ["  to version 2: done (5 items)", "The store is at version 2."]
    assert fake.rewritten == dict.fromkeys(keys, 1)
