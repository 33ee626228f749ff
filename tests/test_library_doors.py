"""One door per library: a third-party library's private names (``_name``
attributes, methods, modules, arguments) are used in that library's one
adapter module only (docs/design.md, "Libraries' private names").

The checker reads modules with ``ast``. A private name counts as the module's
own when the module defines it (a function, class, assignment, parameter or
field of its own); any other private name it reaches for - an attribute of
another object, an inherited method it calls or overrides, a keyword argument,
an imported private module - belongs to someone else. Names of our own other
modules are reported too: a module's private names are its own business.
``namedtuple``'s documented ``_replace``/``_fields``/``_asdict`` are not private.
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.metadata import version

import pytest

from tests._support.source import PACKAGES, ROOT, source_files

ADAPTERS: dict[str, str] = {
    "strawberry-graphql": "api/_strawberry.py",
    "uvicorn": "api/runtime/http_protocol.py",
    "botocore": "storage/dynamodb/_botocore.py",
    "aiohttp": "storage/dynamodb/_aiohttp.py",
    "cpython": "api/observability/allocators.py",
}
"""The one module through which each library's private names (and, for
uvicorn, its protocol's internals; for botocore and aiohttp, the undocumented
functions the DynamoDB data plane takes; for CPython, a C function of its private API
read through ctypes) are reached, by distribution. Each says why and names
the version it was checked against (CPython's by minor version: patch releases
keep the private API). pydantic-settings needs
none: the reader uses its documented custom sources."""

DOCUMENTED = frozenset({"_replace", "_fields", "_asdict", "_make", "_field_defaults"})
"""Underscore names a library documents as public (``collections.namedtuple``)."""


@dataclass(frozen=True)
class Use:
    module: str
    line: int
    name: str

    def __str__(self) -> str:
        return f"{self.module}:{self.line} uses {self.name}"


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _own_names(tree: ast.Module) -> set[str]:
    """Every private name the module itself defines (an attribute only when
    set on ``self`` or ``cls``), less what it overrides of a library's."""
    own: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            own.add(node.name)
        elif isinstance(node, ast.arg):
            own.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            own.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store | ast.Del):
            if isinstance(node.value, ast.Name) and node.value.id in _SELF:
                own.add(node.attr)
        elif isinstance(node, ast.alias):
            own.add(node.asname or node.name.rpartition(".")[2])
    return {name for name in own if _private(name)} - {name for _, name in _overrides(tree)}


_SELF = frozenset({"self", "cls"})


def _third_party(name: str) -> bool:
    top = name.partition(".")[0]
    return bool(top) and top not in PACKAGES and top not in sys.stdlib_module_names


def _imported(tree: ast.Module) -> dict[str, str]:
    """Local name -> the dotted name it stands for, for every import."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.partition(".")[0]] = (
                    alias.name if alias.asname else alias.name.partition(".")[0]
                )
    return names


def _dotted(expression: ast.expr, imported: dict[str, str]) -> str:
    """``GraphQL[Context, None]`` or ``strawberry.Schema`` as the dotted name of the class."""
    if isinstance(expression, ast.Subscript):
        return _dotted(expression.value, imported)
    if isinstance(expression, ast.Attribute):
        return f"{_dotted(expression.value, imported)}.{expression.attr}"
    if isinstance(expression, ast.Name):
        return imported.get(expression.id, "")
    return ""


def _resolve(dotted: str) -> object | None:
    module, _, attribute = dotted.rpartition(".")
    try:
        return getattr(importlib.import_module(module), attribute, None)
    except ImportError:
        return None


def _class_members(node: ast.ClassDef) -> Iterator[tuple[int, str]]:
    for statement in node.body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
            yield statement.lineno, statement.name
        elif isinstance(statement, ast.Assign | ast.AnnAssign):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            yield from ((statement.lineno, t.id) for t in targets if isinstance(t, ast.Name))


def _library_bases(node: ast.ClassDef, imported: dict[str, str]) -> list[object]:
    """The class's bases that a third-party library defines."""
    return [
        base
        for expression in node.bases
        if _third_party(dotted := _dotted(expression, imported))
        and (base := _resolve(dotted)) is not None
    ]


def _overrides(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """Private methods and attributes a class defines over a third-party base's."""
    imported = _imported(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and (bases := _library_bases(node, imported)):
            for line, name in _class_members(node):
                if _private(name) and any(hasattr(base, name) for base in bases):
                    yield line, name


def _in_library_subclasses(tree: ast.Module) -> set[int]:
    """ids of the nodes inside a class with a third-party base: there ``self``
    has the library's private names besides ours."""
    imported = _imported(tree)
    return {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef) and _library_bases(node, imported)
        for inner in ast.walk(node)
    }


def _attribute_uses(tree: ast.Module) -> Iterator[tuple[int, str, bool]]:
    """(line, private attribute, whether it may be one of ours inherited) for
    each attribute read through ``self``, ``cls`` or ``super()`` outside a
    library's subclass, or through anything else, ``getattr(x, "_name")``
    included."""
    strict = _in_library_subclasses(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            value = node.value
            through_self = isinstance(value, ast.Name) and value.id in _SELF
            through_super = isinstance(value, ast.Call) and _dotted(value.func, _SUPER) == "super"
            if through_self and not isinstance(node.ctx, ast.Load):
                continue
            yield node.lineno, node.attr, (through_self or through_super) and id(node) not in strict
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr", "hasattr", "delattr")
            and len(node.args) > 1
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and _private(node.args[1].value)
        ):
            yield node.lineno, node.args[1].value, False


_SUPER = {"super": "super"}


def private_uses(name: str, source: str, ours: frozenset[str] = frozenset()) -> list[Use]:
    """Private names the module uses and does not define; ``ours``: those our
    other modules define, which ``self`` may have inherited and a call of
    ours may take as keywords."""
    tree = ast.parse(source)
    own = _own_names(tree)
    known = own | ours
    found: list[tuple[int, str]] = [(line, f"def {used}") for line, used in _overrides(tree)]
    for line, attribute, inherited in _attribute_uses(tree):
        if attribute not in (known if inherited else own) and attribute not in DOCUMENTED:
            found.append((line, f".{attribute}"))
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg and _private(node.arg):
            if node.arg not in known:
                found.append((node.value.lineno, f"{node.arg}="))
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if _third_party(node.module):
                for alias in node.names:
                    dotted = f"{node.module}.{alias.name}"
                    if any(_private(part) for part in dotted.split(".")):
                        found.append((node.lineno, dotted))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if _third_party(alias.name) and any(map(_private, alias.name.split("."))):
                    found.append((node.lineno, alias.name))
    return sorted({Use(name, line, used) for line, used in found}, key=lambda u: (u.line, u.name))


def test_private_names_are_used_in_their_adapter_only() -> None:
    sources = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in source_files()}
    ours = frozenset().union(*(_own_names(ast.parse(text)) for text in sources.values()))
    adapters = set(ADAPTERS.values())
    uses = [
        use
        for path, text in sources.items()
        if path not in adapters
        for use in private_uses(path, text, ours)
    ]
    assert not uses, "Private names used outside their adapter module:\n" + "\n".join(
        map(str, uses)
    )


PLANTED = [
    (
        "from strawberry import Schema\ndef f(schema: Schema):\n    return schema._schema\n",
        "._schema",
    ),
    (
        'def f(schema):\n    return getattr(schema, "_strawberry_schema", None)\n',
        "._strawberry_schema",
    ),
    ("def f(context):\n    context._provided_operation_name = None\n", "._provided_operation_name"),
    ("def read(cls):\n    return cls(_build_sources=((), {}))\n", "_build_sources="),
    (
        "from strawberry.schema._graphql_core import GraphQLCoreExecutor\n",
        "strawberry.schema._graphql_core.GraphQLCoreExecutor",
    ),
    (
        "from strawberry.asgi import GraphQL\n"
        "class View(GraphQL):\n"
        "    async def _process_stream_result(self, request, value, pending):\n"
        "        return await super()._process_stream_result(request, value, pending)\n",
        "def _process_stream_result",
    ),
    (
        "from strawberry.asgi import GraphQL\n"
        "class View(GraphQL):\n"
        "    def transport(self, request):\n"
        "        return self._get_stream_transport_from_headers(request.headers)\n",
        "._get_stream_transport_from_headers",
    ),
    (
        "import strawberry\n"
        "class Schema(strawberry.Schema):\n"
        "    def core(self):\n"
        "        return self._schema\n",
        "._schema",
    ),
]


@pytest.mark.parametrize(("source", "use"), PLANTED, ids=[use for _, use in PLANTED])
def test_a_planted_private_use_is_reported(source: str, use: str) -> None:
    found = private_uses("api.planted", source)
    assert use in {u.name for u in found}, found
    assert all(u.line <= len(source.splitlines()) for u in found)


RIGHT = [
    "class A:\n"
    "    def __init__(self):\n        self._n = 1\n"
    "    def n(self):\n        return self._n\n",
    "def _helper():\n    pass\ndef f(module):\n    return module._helper\n",
    "from urllib.parse import urlsplit\ndef f(url):\n    return urlsplit(url)._replace(path='')\n",
    "from dataclasses import dataclass\n"
    "@dataclass\nclass P:\n    _item: int\n"
    "def f():\n    return P(_item=1)\n",
    "from strawberry.asgi import GraphQL\n"
    "class View(GraphQL):\n"
    "    def __init__(self):\n        self._mine = 1\n"
    "    def _helper(self):\n        return self._mine\n",
]


@pytest.mark.parametrize("source", RIGHT)
def test_a_module_s_own_private_names_pass(source: str) -> None:
    assert private_uses("api.planted", source) == []


def test_own_names_of_other_modules_reach_self_and_keywords() -> None:
    """``self`` may inherit a private name from our own base class elsewhere,
    and a call may pass a private field another module of ours declares."""
    source = (
        "from api.limits.ratelimit import RateLimit\n"
        "class Shared(RateLimit):\n"
        "    def f(self):\n"
        "        return self._calls()\n"
    )
    assert [u.name for u in private_uses("api.planted", source)] == ["._calls"]
    assert private_uses("api.planted", source, frozenset({"_calls"})) == []


@pytest.mark.parametrize(("distribution", "path"), ADAPTERS.items())
def test_each_adapter_says_which_version_it_was_checked_against(
    distribution: str, path: str
) -> None:
    text = " ".join((ROOT / path).read_text(encoding="utf-8").split())
    installed = (
        f"{sys.version_info.major}.{sys.version_info.minor}"
        if distribution == "cpython"
        else version(distribution)
    )
    assert f"Checked against {distribution} {installed}" in text
