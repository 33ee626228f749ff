"""docs/operations.md's restore steps 2 and 3, run as written: over a store
that was stopped cleanly (no ``-wal``/``-shm``), over one that was not, and
into a new directory; ``proofgate reconcile`` then reads the restored copy."""

from __future__ import annotations

import os
import re
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests._support.source import ROOT

OPERATIONS = ROOT / "docs" / "operations.md"


def restore_commands() -> str:
    section = OPERATIONS.read_text().split("To restore:", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert block is not None
    return "\n".join(line.strip() for line in block.group(1).splitlines())


def proofgate(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROOFGATE_")}
    command = [str(Path(sys.executable).with_name("proofgate")), *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def backup(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A store with its key files, and a backup of it."""
    source = tmp_path_factory.mktemp("source")
    assert proofgate("migrate", "--create", "--data-dir", str(source)).returncode == 0
    copy = source.parent / f"{source.name}-backup.db"
    taken = proofgate("backup", str(copy), "--data-dir", str(source))
    assert taken.returncode == 0, taken.stderr
    return source, copy


@pytest.mark.parametrize("leftovers", [(), ("-wal", "-shm"), None], ids=["clean", "wal", "new"])
def test_the_restore_steps_run_as_written(
    backup: tuple[Path, Path], tmp_path: Path, leftovers: tuple[str, ...] | None
) -> None:
    source, copy = backup
    directory = tmp_path / "data"
    directory.mkdir()
    for kept in source.iterdir():  # the key files, kept apart from the data
        if not kept.name.startswith("proofgate.db"):
            (directory / kept.name).write_bytes(kept.read_bytes())
    if leftovers is not None:
        sqlite3.connect(directory / "proofgate.db").close()
        for suffix in leftovers:
            (directory / f"proofgate.db{suffix}").write_bytes(b"stale")
    commands = (
        restore_commands().replace("DIR", str(directory)).replace("/backups/pg.db", str(copy))
    )
    result = subprocess.run(["bash", "-ec", commands], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert (directory / "proofgate.db").read_bytes() == copy.read_bytes()
    assert stat.S_IMODE((directory / "proofgate.db").stat().st_mode) == 0o600
    moved = sorted(p.name for p in (directory / "replaced").iterdir())
    expected = (
        [] if leftovers is None else ["proofgate.db", *(f"proofgate.db{s}" for s in leftovers)]
    )
    assert moved == sorted(expected)
    reconciled = proofgate("reconcile", "--data-dir", str(directory))
    assert reconciled.returncode == 0 and "OK" in reconciled.stdout, reconciled.stderr
