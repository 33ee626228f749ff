"""The repository ignores the paths its docs tell people to create: data
directories, secrets and built wheels never show up for ``git add -A``."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from tests._support.source import ROOT

OPERATIONS = ROOT / "docs" / "operations.md"


def documented_paths() -> set[str]:
    """The laptop recipe's data directories and secrets, the default data
    directory, and what `make wheel` writes."""
    recipe = OPERATIONS.read_text().split("## DynamoDB on your laptop", 1)[1].split("```")[1]
    paths = set(re.findall(r"--data-dir (\S+)", recipe))
    paths |= set(re.findall(r"init-secrets (\S+) > (\S+)", recipe)[0])
    return paths | {".data", "dist", "secret.json"}


def ignored(path: str) -> bool:
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("not a git work tree")
    probe = [git, "-C", str(ROOT), "check-ignore", "-q", "--no-index", path]
    return subprocess.run(probe, check=False).returncode == 0


def test_the_documented_paths_are_ignored() -> None:
    paths = documented_paths()
    assert {".data-a", ".fleet", ".fleet.env"} <= paths
    assert [path for path in sorted(paths) if not ignored(path + "/x") and not ignored(path)] == []


def test_a_source_file_is_not_ignored() -> None:
    """The positive control: check-ignore does say no."""
    assert not ignored("api/app.py")
