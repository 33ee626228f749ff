"""The lock files against pyproject.toml: every declared requirement is
pinned at a version it allows, with hashes, and nothing declared is missing.

Checked offline, from the files: re-resolving would need the registry and
would fail whenever a new release came out, not when the lock is stale.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from typing import Any

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests._support.source import ROOT

PYPROJECT = ROOT / "pyproject.toml"
LOCKS: dict[str, Callable[[dict[str, Any]], list[str]]] = {
    "requirements.lock": lambda project: project["project"]["dependencies"],
    "requirements-dev.lock": lambda project: [
        *project["project"]["dependencies"],
        *project["project"]["optional-dependencies"]["dev"],
    ],
    "requirements-build.lock": lambda project: project["build-system"]["requires"],
    "requirements-checkov.lock": lambda _: requirements_in("requirements-checkov.in"),
}
_PIN = re.compile(
    r"^([A-Za-z0-9_.-]+)==([^ ;\\]+)(?: ; ([^\\]*))? \\\n"
    r"((?:\s+--hash=sha256:[0-9a-f]{64}(?: \\)?\n)+)",
    re.M,
)


def requirements_in(name: str) -> list[str]:
    lines = (ROOT / name).read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def entries(text: str) -> list[tuple[str, str, str]]:
    """(name, version, marker) of every pinned line that carries hashes."""
    return [(name, version, marker) for name, version, marker, _ in _PIN.findall(text)]


def pins(text: str) -> dict[str, str]:
    """Name -> version for this interpreter (a universal lock may pin one
    package twice, under exclusive markers)."""
    return {
        canonicalize_name(name): version
        for name, version, marker in entries(text)
        if not marker or Marker(marker).evaluate()
    }


def stale(declared: list[str], lock: str) -> list[str]:
    """Each declared requirement the lock does not satisfy, as a sentence."""
    pinned = pins(lock)
    problems = []
    for text in declared:
        requirement = Requirement(text)
        if requirement.marker and not requirement.marker.evaluate():
            continue
        version = pinned.get(canonicalize_name(requirement.name))
        if version is None:
            problems.append(f"{requirement.name} is not locked")
        elif not requirement.specifier.contains(version, prereleases=True):
            problems.append(f"{requirement.name}=={version} does not satisfy {requirement}")
    return problems


def project(text: str | None = None) -> dict[str, Any]:
    return tomllib.loads(text if text is not None else PYPROJECT.read_text())


@pytest.mark.parametrize("name", sorted(LOCKS))
def test_the_lock_satisfies_pyproject(name: str) -> None:
    lock = (ROOT / name).read_text()
    assert stale(LOCKS[name](project()), lock) == [], f"run `make lock` ({name} is stale)"


@pytest.mark.parametrize("name", sorted(LOCKS))
def test_every_line_of_the_lock_is_pinned_with_hashes(name: str) -> None:
    lock = (ROOT / name).read_text()
    requirement_lines = [
        line for line in lock.splitlines() if line and not line[0].isspace() and line[0] != "#"
    ]
    assert len(requirement_lines) == len(entries(lock)) > 0


def test_the_locks_agree_on_every_version() -> None:
    dev = pins((ROOT / "requirements-dev.lock").read_text())
    for name in ("requirements.lock", "requirements-build.lock"):
        locked = pins((ROOT / name).read_text())
        assert {p: v for p, v in locked.items() if dev.get(p) != v} == {}, name


def test_a_changed_range_or_a_new_dependency_is_stale() -> None:
    text = PYPROJECT.read_text()
    assert '"orjson>=3.11,<4"' in text
    changed = project(text.replace('"orjson>=3.11,<4"', '"orjson>=4,<5", "leftpad>=1"'))
    problems = stale(changed["project"]["dependencies"], (ROOT / "requirements.lock").read_text())
    assert len(problems) == 2
    assert "orjson==" in problems[0] and "leftpad is not locked" in problems[1]


def test_the_build_lock_source_is_the_build_system() -> None:
    """requirements-build.in exists so the build lock's header names a file
    (Renovate replays it); it says what [build-system] requires, no more."""
    requires = project()["build-system"]["requires"]
    assert requirements_in("requirements-build.in") == requires


def test_every_lock_header_is_a_command_that_can_be_run_again() -> None:
    """Renovate (renovate.json) re-runs each lock's header to refresh it: a
    plain `uv pip compile` with `--option=value` and files as sources."""
    for name in LOCKS:
        command = (ROOT / name).read_text().splitlines()[1].removeprefix("#    ")
        words = command.split()
        assert words[:3] == ["uv", "pip", "compile"], name
        assert f"--output-file={name}" in words, name
        sources = [w for w in words[3:] if not w.startswith("-")]
        assert sources and all((ROOT / source).is_file() for source in sources), name
