"""``tests/`` mirrors the source tree, and ``api/`` stays walkable (docs/design.md, "Layout").

A test module sits in the directory of what it tests: ``tests/api/ws/`` for
``api/ws/``. Suites that test no one package (conformance over both backends,
the docs, the bench, the deploy files) and helper modules (``_name.py``) are
exempt. Every package under ``api/`` says in its docstring what it holds, and
``api/`` itself keeps a handful of modules at its top level.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from tests._support.source import PACKAGES, ROOT

OWN_SUITES = frozenset({"conformance", "_support", "bench", "clients", "deploy", "docs"})
"""Directories of ``tests/`` that mirror no package (``clients``: real client tools)."""

API_TOP_LEVEL_MAX = 12


def misplaced(test_modules: Iterable[PurePosixPath], source_dirs: set[PurePosixPath]) -> list[str]:
    """Test modules (paths relative to ``tests/``) whose directory has no
    counterpart among ``source_dirs`` (relative to the repository root)."""
    wrong = []
    for module in test_modules:
        if module.name.startswith("_") or module.name == "conftest.py":
            continue
        parts = module.parts
        if len(parts) == 1 or parts[0] in OWN_SUITES:
            continue
        if parts[0] not in PACKAGES or module.parent not in source_dirs:
            wrong.append(str(module))
    return sorted(wrong)


def _source_dirs() -> set[PurePosixPath]:
    return {
        PurePosixPath(path.relative_to(ROOT).as_posix())
        for package in PACKAGES
        for path in [ROOT / package, *(ROOT / package).rglob("*")]
        if path.is_dir() and path.name != "__pycache__"
    }


def _test_modules() -> list[PurePosixPath]:
    tests = ROOT / "tests"
    return [PurePosixPath(path.relative_to(tests).as_posix()) for path in tests.rglob("*.py")]


def test_tests_mirror_the_source_tree() -> None:
    wrong = misplaced(_test_modules(), _source_dirs())
    assert not wrong, f"Test modules in a directory the source tree does not have: {wrong}"


def test_a_test_beside_no_package_is_reported() -> None:
    dirs = {PurePosixPath("api"), PurePosixPath("api/ws")}
    modules = [
        PurePosixPath(name)
        for name in (
            "api/ws/test_frames.py",
            "api/test_app.py",
            "api/execution/test_plans.py",
            "api/ws/_helpers.py",
            "frontend/test_page.py",
            "conformance/test_reads.py",
            "test_layout.py",
        )
    ]
    assert misplaced(modules, dirs) == ["api/execution/test_plans.py", "frontend/test_page.py"]


def _api_packages() -> list[Path]:
    return sorted(path.parent for path in (ROOT / "api").rglob("__init__.py"))


def test_every_api_package_says_what_it_holds() -> None:
    silent = [
        str(package.relative_to(ROOT))
        for package in _api_packages()
        if not ast.get_docstring(ast.parse((package / "__init__.py").read_text(encoding="utf-8")))
    ]
    assert not silent, f"Packages without a docstring in __init__.py: {silent}"
    assert len(_api_packages()) > 10, "the check sees the sub-packages"


def test_api_keeps_a_handful_of_top_level_modules() -> None:
    modules = sorted(path.name for path in (ROOT / "api").glob("*.py"))
    assert len(modules) <= API_TOP_LEVEL_MAX, f"api/ holds {len(modules)} modules: {modules}"


def public_surface_problems(package: str, source: str, modules: Iterable[str]) -> list[str]:
    """What is wrong with a package's ``__all__``: missing, or naming what the
    package neither defines nor holds as a module."""
    tree = ast.parse(source)
    declared = None
    defined: set[str] = set(modules)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets
        ):
            declared = ast.literal_eval(node.value)
        elif isinstance(node, ast.ImportFrom):
            defined.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            defined.add(node.name)
        elif isinstance(node, ast.Assign):
            defined.update(t.id for t in node.targets if isinstance(t, ast.Name))
    if declared is None:
        return [f"{package} has no __all__"]
    return [
        f"{package}.__all__ names {name}, which it lacks"
        for name in declared
        if name not in defined
    ]


def test_every_api_package_declares_its_public_names() -> None:
    problems = [
        problem
        for package in _api_packages()
        for problem in public_surface_problems(
            str(package.relative_to(ROOT)),
            (package / "__init__.py").read_text(encoding="utf-8"),
            (path.stem for path in package.glob("*.py")),
        )
    ]
    assert not problems, problems


def test_a_package_without_its_public_names_is_reported() -> None:
    assert public_surface_problems("api/x", '"""Doc."""\n', ["a"]) == ["api/x has no __all__"]
    assert public_surface_problems("api/x", '__all__ = ["a", "b"]\n', ["a"]) == [
        "api/x.__all__ names b, which it lacks"
    ]
    assert public_surface_problems("api/x", 'from .a import b\n__all__ = ["a", "b"]\n', ["a"]) == []
