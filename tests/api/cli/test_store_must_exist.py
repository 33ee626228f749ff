"""Operator commands over an existing store refuse one that is not there:
a mistyped --data-dir gets one line and exit 1, and nothing is created
(no store, no key files, no directory) unless --create says to.
Also the data directory or the SQLite path pointing at the wrong kind of
file: one line, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from api.cli.main import main
from tests.api.cli.test_operator_errors import one_line_with_hint

PROOFGATE = str(Path(sys.executable).with_name("proofgate"))
COMMANDS = [
    ["reconcile"],
    ["release-reservations"],
    ["migrate"],
    ["outbox", "--parked"],
]


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("PROOFGATE_"):
            monkeypatch.delenv(name)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_a_mistyped_data_dir_creates_nothing(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    typo = tmp_path / "typo"
    error, hint = one_line_with_hint(main([*command, "--data-dir", str(typo)]), capsys)
    assert error == f"No SQLite store at {typo / 'proofgate.db'}: {typo} does not exist"
    assert "--create" in hint
    assert list(tmp_path.iterdir()) == []
    # The control: told to, the same command starts a store there.
    assert main([*command, "--create", "--data-dir", str(typo)]) == 0
    assert (typo / "proofgate.db").is_file() and (typo / "cursor.key").is_file()


def test_an_existing_directory_without_a_store_is_refused_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    error, _ = one_line_with_hint(main(["reconcile", "--data-dir", str(tmp_path)]), capsys)
    assert error.endswith(f"{tmp_path} holds none")
    assert list(tmp_path.iterdir()) == []


def test_a_store_that_exists_needs_no_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["migrate", "--create", "--data-dir", str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["reconcile", "--data-dir", str(tmp_path)]) == 0
    assert "OK" in capsys.readouterr().out


def test_backup_of_no_store_creates_none_and_offers_no_create(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    typo = tmp_path / "typo"
    code = main(["backup", str(tmp_path / "copy.db"), "--data-dir", str(typo)])
    _, hint = one_line_with_hint(code, capsys)
    assert "--create" not in hint
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", [["reconcile", "--create"], ["serve"]], ids=lambda c: c[0])
def test_a_data_dir_under_a_regular_file_is_one_line(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    regular = tmp_path / "file"
    regular.write_text("not a directory")
    error, hint = one_line_with_hint(main([*command, "--data-dir", str(regular / "d")]), capsys)
    assert error == f"Cannot read the key file {regular / 'd' / 'cursor.key'}: Not a directory"
    assert "--data-dir" in hint


def test_a_sqlite_path_that_is_a_directory_is_one_line_without_a_traceback(
    tmp_path: Path,
) -> None:
    """Run as a process: the checkpoint thread's log would reach stderr."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PROOFGATE_")},
        "PROOFGATE_DATA_DIR": str(tmp_path / "data"),
        "PROOFGATE_SQLITE_PATH": str(tmp_path),
    }
    for command, message in [
        (["reconcile"], f"The SQLite store {tmp_path} is a directory"),
        (["reconcile", "--create"], f"Cannot open the SQLite store {tmp_path}: it is a directory"),
    ]:
        result = subprocess.run(
            [PROOFGATE, *command], env=env, capture_output=True, text=True, timeout=60
        )
        assert result.returncode == 1
        assert result.stderr.splitlines() == [
            f"proofgate: error: {message}",
            "proofgate: hint: Point PROOFGATE_SQLITE_PATH at "
            + (
                "the store's file (or unset it)."
                if "--create" not in command
                else "a file, or unset it."
            ),
        ], result.stderr
