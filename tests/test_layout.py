"""The source tree keeps its layout (docs/design.md, "Layout").

Imports point one way: api -> resolvers -> services -> storage, with domain
below them all and storage knowing only ``domain.errors``; services never
touch GraphQL. Inside ``api/`` a few parts may import only a few others (the
executor only settings), commands and the app are imported by ``api/cli``
alone, and only ``api/cli`` parses the command line. The checker reads modules
with ``ast`` (no import runs), so imports under ``TYPE_CHECKING`` and inside
functions count too.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests._support.source import PACKAGES, ROOT, source_files

ALLOWED: dict[str, frozenset[str]] = {
    "api": frozenset({"api", "resolvers", "services", "storage", "domain"}),
    "resolvers": frozenset({"resolvers", "services", "storage", "domain"}),
    "services": frozenset({"services", "storage", "domain"}),
    "storage": frozenset({"storage", "domain.errors"}),
    "domain": frozenset({"domain"}),
}
"""What each package may import of ours; a dotted entry allows that module only."""

GRAPHQL_LIBRARIES = frozenset({"strawberry", "graphql"})
WITHOUT_GRAPHQL = frozenset({"services", "storage", "domain"})
RESOLVER_MODULE_MAX_LINES = 250
FUNCTION_MAX_LINES = 60


@dataclass(frozen=True)
class Module:
    name: str
    source: str
    is_package: bool = False


@dataclass(frozen=True)
class Violation:
    module: str
    line: int
    target: str

    def __str__(self) -> str:
        return f"{self.module}:{self.line} imports {self.target}"


def _module(path: Path) -> Module:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts.pop()
    return Module(".".join(parts), path.read_text(encoding="utf-8"), is_package)


def _imports(module: Module) -> Iterator[tuple[int, str]]:
    """(line, absolute name) for every import; ``from m import n`` yields
    ``m.n``, which names a submodule or an attribute of ``m``."""
    package = module.name if module.is_package else module.name.rpartition(".")[0]
    for node in ast.walk(ast.parse(module.source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def _allowed(importer: str, target: str) -> bool:
    top = target.partition(".")[0]
    if top in GRAPHQL_LIBRARIES:
        return importer not in WITHOUT_GRAPHQL
    if top not in PACKAGES:
        return True
    return any(target == entry or target.startswith(entry + ".") for entry in ALLOWED[importer])


def violations(modules: Iterable[Module]) -> list[Violation]:
    """One per offending import statement."""
    found: dict[tuple[str, int], Violation] = {}
    for module in modules:
        importer = module.name.partition(".")[0]
        for line, target in _imports(module):
            if not _allowed(importer, target):
                found.setdefault((module.name, line), Violation(module.name, line, target))
    return sorted(found.values(), key=str)


def test_imports_point_one_way() -> None:
    wrong = violations(_module(path) for path in source_files())
    assert not wrong, "Imports against the layout:\n" + "\n".join(map(str, wrong))


PLANTED = [
    Module(
        "services.planted",
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from resolvers.context import Info\n",
    ),
    Module("services.pipeline.planted", "import strawberry\n"),
    Module("services.ledger.planted", "def f():\n    from graphql import GraphQLError\n"),
    Module("resolvers.products.planted", "from api.settings.gateway import Settings\n"),
    Module("storage.planted", "from domain.ledger import CREDIT\n"),
    Module("storage.sqlite.planted", "from services import context\n"),
    Module("domain.planted", "import storage.keys\n"),
    Module("storage.dynamodb.planted", "import domain\n"),
    Module(
        "services.reconcile.planted", "from api.runtime.resolver_services import load_key_ring\n"
    ),
]


@pytest.mark.parametrize("module", PLANTED, ids=lambda module: module.name)
def test_a_planted_wrong_import_is_reported(module: Module) -> None:
    [violation] = violations([module])
    assert violation.module == module.name
    assert violation.line == len(module.source.splitlines())


RIGHT = [
    Module("api.planted", "from resolvers.root import Query\nfrom services import ledger\n"),
    Module("resolvers.ledger.planted", "from ..context import Info\nfrom . import types\n"),
    Module("services.ledger.planted", "from ..context import Services\nfrom .items import x\n"),
    Module("services.pipeline", "from .relay import Relay\n", is_package=True),
    Module("storage.planted", "from domain.errors import NotFound\nfrom domain import errors\n"),
    Module("domain.planted", "from .errors import NotFound\nimport json\n"),
]


@pytest.mark.parametrize("module", RIGHT, ids=lambda module: module.name)
def test_imports_along_the_layout_pass(module: Module) -> None:
    assert violations([module]) == []


def test_relative_imports_resolve_against_the_importing_package() -> None:
    nested = Module("services.ledger.planted", "from ..pipeline.outbox.items import describe\n")
    package = Module("services.ledger", "from .items import x\n", is_package=True)
    assert list(_imports(nested)) == [(1, "services.pipeline.outbox.items.describe")]
    assert list(_imports(package)) == [(1, "services.ledger.items.x")]


API_MAY_IMPORT: dict[str, tuple[str, ...]] = {
    "api.graphql.execution": (
        "api.graphql.execution",
        "api.settings",
        "api._strawberry",
        "api.observability.fallbacks",
    ),
    "api.observability": ("api.observability", "api.__version__"),
    "api.demo": ("api.demo", "api.settings"),
    "api.http": (
        "api.http",
        "api.wire",
        "api.ws",
        "api.limits",
        "api.observability",
        "api.demo",
        "api.__version__",
    ),
    "api.wire": ("api.wire", "api.observability"),
    "api.settings": ("api.settings", "api.observability"),
}
"""Parts of ``api/`` that may import only these parts of it: the executor knows
nothing of limits, routes, sockets or commands (it counts its fallbacks in
observability's leaf module, as the server's protocol does); observability and the demo are
leaves; the routes and the HTTP stream transport sit below the GraphQL layer
(a stream is a connection like a WebSocket), and the wire below them all;
settings hold every section, so reading settings loads no other part."""

API_IMPORTED_ONLY_BY: dict[str, tuple[str, ...]] = {
    "api.cli": ("api.cli",),
    "api.app": ("api.cli",),
}
"""Parts of ``api/`` only these may import: nothing depends on a command, and
only ``proofgate serve`` builds the app."""

ARGV_PARSER = "api.cli"
"""The one place the command line is parsed (``argparse``, ``sys.argv``)."""


def _within(name: str, entry: str) -> bool:
    return name == entry or name.startswith(entry + ".")


def _api_rule_broken(importer: str, target: str) -> bool:
    if not _within(target, "api"):
        return False
    for part, allowed in API_MAY_IMPORT.items():
        if _within(importer, part) and not any(_within(target, entry) for entry in allowed):
            return True
    return any(
        _within(target, part) and not any(_within(importer, entry) for entry in importers)
        for part, importers in API_IMPORTED_ONLY_BY.items()
    )


def _argv_uses(module: Module) -> Iterator[tuple[int, str]]:
    for node in ast.walk(ast.parse(module.source)):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, a.name) for a in node.names if a.name == "argparse")
        elif isinstance(node, ast.ImportFrom) and node.module in ("argparse", "sys"):
            for alias in node.names:
                if node.module == "argparse" or alias.name == "argv":
                    yield node.lineno, f"{node.module}.{alias.name}"
        elif (
            isinstance(node, ast.Attribute)
            and node.attr == "argv"
            and isinstance(node.value, ast.Name)
            and node.value.id == "sys"
        ):
            yield node.lineno, "sys.argv"


def api_violations(modules: Iterable[Module]) -> list[Violation]:
    """The rules inside ``api/`` (docs/design.md, "Layout"), and argv parsed
    in ``api/cli`` only, whichever package tries."""
    found: dict[tuple[str, int], Violation] = {}
    for module in modules:
        for line, target in _imports(module):
            if _api_rule_broken(module.name, target):
                found.setdefault((module.name, line), Violation(module.name, line, target))
        if not _within(module.name, ARGV_PARSER):
            for line, target in _argv_uses(module):
                found.setdefault((module.name, line), Violation(module.name, line, target))
    return sorted(found.values(), key=str)


def test_api_parts_import_along_their_rules() -> None:
    wrong = api_violations(_module(path) for path in source_files())
    assert not wrong, "Imports against api/'s rules:\n" + "\n".join(map(str, wrong))


API_PLANTED = [
    Module("api.graphql.execution.planted", "from api.limits.cost import CostBudget\n"),
    Module("api.graphql.execution.plan", "if True:\n    from ...http.guard import HTTPGuard\n"),
    Module("api.graphql.execution.planted", "from api.ws import frames\n"),
    Module("api.graphql.execution.planted", "from api.cli.serve import serve\n"),
    Module("api.observability.planted", "from api.wire.errors import error_response\n"),
    Module("api.demo.planted", "from api.runtime.backend import open_storage\n"),
    Module("api.http.planted", "from api.graphql.view import GraphQLApp\n"),
    Module("api.http.planted", "from api.runtime.backend import open_storage\n"),
    Module("api.wire.planted", "from api.http.guard import HTTPGuard\n"),
    Module("api.settings.planted", "from api.operations.registry import OperationRegistry\n"),
    Module("api.runtime.planted", "from api.cli.serve import serve\n"),
    Module("api.mcp.planted", "from api.app import create_app\n"),
    Module("api.runtime.planted", "import argparse\n"),
    Module("api.operations.planted", "from argparse import ArgumentParser\n"),
    Module("services.planted", "import sys\n\nargs = sys.argv[1:]\n"),
    Module("api.http.planted", "from sys import argv\n"),
]


@pytest.mark.parametrize("module", API_PLANTED, ids=lambda module: module.name)
def test_a_planted_wrong_import_inside_api_is_reported(module: Module) -> None:
    [violation] = api_violations([module])
    assert violation.module == module.name
    assert violation.line == len(module.source.splitlines())


API_RIGHT = [
    Module(
        "api.graphql.execution.planted",
        "from api.settings.limits import MAX_RESPONSE_BYTES\nfrom .plan import Plan\n",
    ),
    Module("api.observability.planted", "from api import __version__\nimport sys\n"),
    Module("api.cli.planted", "import argparse\nimport sys\n\nsys.argv\nfrom api.app import x\n"),
    Module("api.graphql.planted", "from api.limits.cost import CostBudget\n"),
    Module("api.http.planted", "from api.wire.errors import error_response\n"),
    Module("api.http.streams", "from api.ws.connections import LiveConnection\n"),
    Module("api.graphql.entry", "from api.http.guard import HTTPGuard\n"),
]


@pytest.mark.parametrize("module", API_RIGHT, ids=lambda module: module.name)
def test_imports_along_api_rules_pass(module: Module) -> None:
    assert api_violations([module]) == []


def _api_part(name: str) -> str | None:
    """The sub-package (or top-level module) of ``api/`` a name belongs to."""
    parts = name.split(".")
    return ".".join(parts[:2]) if parts[0] == "api" and len(parts) > 1 else None


def api_cycles(modules: Iterable[Module]) -> list[list[str]]:
    """Groups of ``api/`` sub-packages that import each other, however many
    steps away (the strongly connected parts of their import graph), each
    sorted; imports under ``TYPE_CHECKING`` and inside functions count, as
    they do for the layout."""
    edges: dict[str, set[str]] = {}
    for module in modules:
        source = _api_part(module.name)
        for _, target in _imports(module):
            part = _api_part(target)
            if source is not None and part is not None and part != source:
                edges.setdefault(source, set()).add(part)
    reach = {part: _reachable(part, edges) for part in edges}
    groups = {
        tuple(sorted(other for other in reach if part in reach[other] and other in reach[part]))
        for part in reach
        if part in reach[part]
    }
    return sorted(list(group) for group in groups)


def _reachable(start: str, edges: dict[str, set[str]]) -> set[str]:
    seen: set[str] = set()
    pending = list(edges.get(start, ()))
    while pending:
        part = pending.pop()
        if part not in seen:
            seen.add(part)
            pending.extend(edges.get(part, ()))
    return seen


def test_api_sub_packages_import_no_cycle() -> None:
    cycles = api_cycles(_module(path) for path in source_files())
    assert not cycles, f"api/ sub-packages that import each other: {cycles}"


def test_a_planted_cycle_between_api_sub_packages_is_reported() -> None:
    modules = [
        Module("api.graphql.view", "from api.http.guard import HTTPGuard\n"),
        Module("api.http.guard", "from api.wire.errors import error_response\n"),
        Module("api.wire.errors", "from api.observability import logs\n"),
        Module("api.ws.frames", "from api.wire.json_response import encode_json\n"),
        Module(
            "api.observability.spans",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from api.graphql.view import GraphQLApp\n",
        ),
    ]
    assert api_cycles(modules) == [["api.graphql", "api.http", "api.observability", "api.wire"]]
    assert api_cycles(modules[:-1]) == [], "no cycle where there is none"


def test_resolver_modules_stay_small() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for path in sorted((ROOT / "resolvers").rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > RESOLVER_MODULE_MAX_LINES
    }
    assert not long, f"resolvers/ modules over {RESOLVER_MODULE_MAX_LINES} lines: {long}"


def _long_functions(module: Module) -> Iterator[str]:
    for node in ast.walk(ast.parse(module.source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            lines = (node.end_lineno or node.lineno) - node.lineno + 1
            if lines > FUNCTION_MAX_LINES:
                yield f"{module.name}.{node.name} ({lines} lines)"


def test_functions_stay_short() -> None:
    long = [name for path in source_files() for name in _long_functions(_module(path))]
    assert not long, f"Functions over {FUNCTION_MAX_LINES} lines: {long}"


def test_the_length_check_sees_a_long_function() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(FUNCTION_MAX_LINES))
    module = Module("services.planted", f"async def long():\n{body}")
    assert list(_long_functions(module)) == [
        f"services.planted.long ({FUNCTION_MAX_LINES + 1} lines)"
    ]


_LOADED = """
import importlib, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
print(" ".join(sorted({m.partition(".")[0] for m in sys.modules})))
"""


def _loaded_packages(*modules: str) -> set[str]:
    """Top-level packages loaded by importing ``modules`` in a fresh interpreter."""
    run = subprocess.run(
        [sys.executable, "-c", _LOADED, *modules],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return set(run.stdout.split())


CLI_JOBS = (
    "api.cli.ledger",
    "api.cli.outbox",
    # what the jobs import when they run
    "api.runtime.resolver_services",
    "services.ledger",
    "services.reconcile",
    "services.pipeline.outbox.items",
    "services.pipeline.outbox.parked",
)


def test_cli_jobs_run_without_the_graphql_layer() -> None:
    assert _loaded_packages(*CLI_JOBS).isdisjoint({"resolvers", "strawberry", "graphql"})
    assert {"resolvers", "strawberry"} <= _loaded_packages("api.graphql.schema"), (
        "the check sees them"
    )


CONTEXT_FIELDS = frozenset({"services", "principal", "loaders", "request_id", "trace", "request"})
"""``RequestContext``'s fields: read through ``resolvers.context.request_context``."""


def context_probes(module: Module) -> list[int]:
    """Lines that probe an object for a request context's field by name."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(module.source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("getattr", "hasattr")
        and len(node.args) > 1
        and isinstance(node.args[1], ast.Constant)
        and node.args[1].value in CONTEXT_FIELDS
    ]


def test_the_request_context_is_read_typed() -> None:
    probes = {
        module.name: lines
        for module in map(_module, source_files())
        if (lines := context_probes(module))
    }
    assert not probes, f"getattr probes of a request context (use request_context()): {probes}"


def test_a_planted_context_probe_is_reported() -> None:
    planted = Module(
        "api.planted", 'def f(context):\n    return getattr(context, "request_id", None)\n'
    )
    assert context_probes(planted) == [2]
    typed = Module("api.planted", "def f(context):\n    return request_context(context)\n")
    assert context_probes(typed) == []
