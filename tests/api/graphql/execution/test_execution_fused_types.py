"""The selection functions ``fused.py`` generates are type-checked: every
selection the suite's operations compile to is written into a module, each
as a factory whose parameters are the names the function reads, and mypy
--strict checks it as it checks the code the functions were written from."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from _differential import Differential, suite_operations

from api.graphql.execution import fused
from services.auth import ANONYMOUS, Principal, Role

pytestmark = pytest.mark.fast_paths

ROOT = Path(__file__).resolve().parents[4]

_PARAMETERS = {
    "is_awaitable": "Callable[[object], bool]",
    "gather": "Callable[[dict[str, Any], list[str]], Awaitable[dict[str, Any]]]",
    "SETTLED": "frozenset[type]",
    "run": "FieldRunner",
    "settle": "Settle",
    "failed": "Failed",
    "enum": "type",
    "members": "dict[int, tuple[str, int]]",
}
"""The type of each name the generated code reads, by its prefix."""

_PRELUDE = """\
from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from graphql.pyutils import Path

from api.graphql.execution.fused import Failed, FieldRunner, SelectionRunner, Settle
from api.graphql.execution.protocols import PlanExecutor
"""


def checkable(sources: list[tuple[str, dict[str, Any]]]) -> str:
    factories = [_PRELUDE]
    for number, (source, namespace) in enumerate(sources):
        parameters = ", ".join(
            f"{name}: {_PARAMETERS[re.sub(r'_[0-9]+$', '', name)]}" for name in namespace
        )
        factories.append(
            f"\n\ndef selection_{number}({parameters}) -> SelectionRunner:\n"
            + textwrap.indent(source, "    ")
            + "\n    return run\n"
        )
    return "".join(factories)


def mypy(module: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", str(module)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


async def test_every_selection_the_suite_compiles_type_checks(
    sqlite_gateway: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    sources: list[tuple[str, dict[str, Any]]] = []
    generate = fused.selection_source

    def recording(fields: list[fused.FusedField]) -> tuple[str, dict[str, Any]]:
        source, namespace = generate(fields)
        sources.append((source, dict(namespace)))  # before exec adds to it
        return source, namespace

    monkeypatch.setattr(fused, "selection_source", recording)
    differential = Differential(sqlite_gateway.app.state.graphql.services)
    for text in suite_operations(differential.compiled.graphql_schema):
        for principal in (Principal(Role.ADMIN), ANONYMOUS):
            await differential.run(differential.compiled, text, None, principal)
    assert len(sources) >= 30, "the suite's operations compiled too few selections"
    assert any("source." in source for source, _ in sources), "no inline leaf"
    module = tmp_path / "generated_selections.py"
    module.write_text(checkable(sources))
    checked = mypy(module)
    assert checked.returncode == 0, checked.stdout[:3000]


def test_a_planted_type_error_in_a_template_is_caught(tmp_path: Path) -> None:
    """The positive control: a template reading what the executor lacks."""
    source, namespace = fused.selection_source([])
    planted = source.replace("executor.response_bytes", "executor.response_budget")
    module = tmp_path / "planted.py"
    module.write_text(checkable([(planted, namespace)]))
    checked = mypy(module)
    assert checked.returncode == 1
    assert "response_budget" in checked.stdout
