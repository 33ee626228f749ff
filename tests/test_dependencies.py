"""Every third-party package the gateway's code imports is declared in
pyproject.toml, so a release of Strawberry that stops pulling in graphql-core
or cross-web cannot break an install that only follows our dependencies."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from collections.abc import Iterable, Mapping
from importlib.metadata import packages_distributions

from tests._support.source import PACKAGES, ROOT, source_files

_REQUIREMENT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def normalize(distribution: str) -> str:
    """PEP 503 names, so ``cross_web`` and ``cross-web`` are one distribution."""
    return re.sub(r"[-_.]+", "-", distribution).lower()


def declared_distributions() -> set[str]:
    """The dependencies and the optional extras but ``dev``: the gateway
    imports an extra's packages only when its feature is switched on."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project.get("optional-dependencies", {})
    requirements = [r for name, rs in extras.items() if name != "dev" for r in rs]
    names = set()
    for requirement in [*project["dependencies"], *requirements]:
        match = _REQUIREMENT_NAME.match(requirement)
        assert match, requirement
        names.add(normalize(match.group()))
    return names


def imported_top_levels() -> set[str]:
    names: set[str] = set()
    for path in source_files():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names.update(alias.name.partition(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.partition(".")[0])
    return names


def undeclared(
    imports: Iterable[str], declared: set[str], owners: Mapping[str, list[str]]
) -> dict[str, list[str]]:
    """Third-party import names whose distribution is not declared, with the
    distributions that provide them (empty when none is installed)."""
    ours = set(PACKAGES) | {"__future__"}
    missing = {}
    for name in sorted(set(imports) - ours - sys.stdlib_module_names):
        providers = sorted({normalize(d) for d in owners.get(name, [])})
        if not set(providers) & declared:
            missing[name] = providers
    return missing


def test_the_scan_sees_direct_imports() -> None:
    imports = imported_top_levels()
    assert {"strawberry", "graphql", "cross_web", "starlette", "pydantic_settings"} <= imports
    assert "os" in imports and "domain" in imports


def test_an_undeclared_import_is_reported() -> None:
    owners = {"graphql": ["graphql-core"], "strawberry": ["strawberry-graphql"]}
    missing = undeclared(["graphql", "strawberry", "json"], {"strawberry-graphql"}, owners)
    assert missing == {"graphql": ["graphql-core"]}
    assert undeclared(["nowhere"], set(), owners) == {"nowhere": []}


def test_every_third_party_import_is_declared() -> None:
    missing = undeclared(imported_top_levels(), declared_distributions(), packages_distributions())
    assert not missing, f"declare these in pyproject.toml [project] dependencies: {missing}"
