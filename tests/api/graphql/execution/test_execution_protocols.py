"""Plans depend on ``PlanExecutor``, the executor on ``OperationContext``:
no module the executor imports imports it back, not even for type checking."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import api.graphql.execution as package

PACKAGE = Path(package.__file__).parent
EXECUTOR = "api.graphql.execution.executor"


def imports_executor(source: str) -> bool:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            named = {f"{node.module}.{alias.name}" for alias in node.names}
            if node.module == EXECUTOR or EXECUTOR in named or node.module == "executor":
                return True
        elif isinstance(node, ast.Import) and any(a.name == EXECUTOR for a in node.names):
            return True
    return False


def test_only_the_package_entry_imports_the_executor() -> None:
    importers = sorted(
        path.name
        for path in PACKAGE.glob("*.py")
        if path.name != "executor.py" and imports_executor(path.read_text())
    )
    assert importers == ["__init__.py"]


@pytest.mark.parametrize(
    "planted",
    [
        "if TYPE_CHECKING:\n    from api.graphql.execution.executor import CompiledExecutor\n",
        "from api.graphql.execution import executor\n",
        "from .executor import CompiledExecutor\n",
    ],
)
def test_a_planted_import_back_is_seen(planted: str) -> None:
    assert imports_executor(planted)
