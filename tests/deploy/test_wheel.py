"""The built wheel is the product: installed on its own, it serves the
explorer (static assets included) and prints the committed schema."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import httpx
import pytest

from tests._support.ports import free_port, serving
from tests._support.source import PACKAGES, ROOT

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, installed with ``--no-deps`` into a directory of its own;
    its dependencies come from this venv."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"  # a copy: an in-tree build writes build/ and egg-info
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build")
    for name in PACKAGES:
        shutil.copytree(ROOT / name, source / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    build = [*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(work), str(source)]
    built = subprocess.run(build, capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = work.glob("proofgate-*.whl")
    site = work / "site"
    subprocess.run([*pip, "install", "--no-deps", "--target", str(site), str(wheel)], check=True)
    return site


def environment(site: Path, **extra: str) -> Mapping[str, str]:
    return {**os.environ, "PYTHONPATH": str(site), **extra}


def run_python(site: Path, *args: str) -> str:
    return subprocess.run(
        [sys.executable, *args],
        cwd=site.parent,
        env=environment(site),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout


def test_the_packages_are_imported_from_the_wheel(installed: Path) -> None:
    code = f"import importlib; print(*(importlib.import_module(p).__file__ for p in {PACKAGES!r}))"
    files = run_python(installed, "-c", code).split()
    assert len(files) == len(PACKAGES)
    assert all(Path(file).is_relative_to(installed) for file in files), files


def test_the_wheel_prints_the_committed_schema(installed: Path) -> None:
    printed = run_python(installed, "-m", "api.cli.main", "export-schema")
    assert printed == (ROOT / "schema.graphql").read_text()


@pytest.fixture
def served(installed: Path, tmp_path: Path) -> Iterator[str]:
    port = free_port()
    env = environment(installed, PROOFGATE_DATA_DIR=str(tmp_path), PROOFGATE_PORT=str(port))
    command = [sys.executable, "-m", "api.cli.main", "serve"]
    devnull = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    with serving(command, port, env=env, cwd=tmp_path, **devnull) as url:
        yield url


def test_the_installed_gateway_serves_the_explorer_and_its_assets(served: str) -> None:
    page = httpx.get(f"{served}/graphql", headers={"Accept": "text/html"}, timeout=5)
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assets = re.findall(r'(?:src|href)="(/graphql/static/[^"?]+)', page.text)
    assert {"graphiql.min.js", "graphiql.min.css"} <= {a.rsplit("/", 1)[1] for a in assets}
    for asset in assets:
        response = httpx.get(f"{served}{asset}", timeout=5)
        assert response.status_code == 200 and len(response.content) > 100, asset


def test_the_installed_capacity_command_needs_no_checkout(installed: Path, tmp_path: Path) -> None:
    """`proofgate capacity` reads its profile from the wheel's package data,
    run from a directory with nothing beside it."""
    result = subprocess.run(
        [sys.executable, "-m", "api.cli.main", "capacity", "--mix", "page=10"],
        cwd=tmp_path,
        env=environment(installed),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "page" in result.stdout
    assert (installed / "api" / "cli" / "capacity-profile.json").is_file()
