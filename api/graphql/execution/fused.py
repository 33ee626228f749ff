"""A selection set's fields as one generated function.

A page of fifty products completes some three hundred scalar attributes. As
closures, each one is three calls: the field, the attribute read and the
leaf's completion. A plan instead generates, per selection set, one function
in which a scalar attribute is a few lines: read it and, when the value is
its own output (a printable ASCII string without a quote, a ``bool``, an enum
member the plan has named), count its JSON bytes and keep it. Every other
value, and every error, goes to the closures the field would have run, so
graphql-core's answer stays the one behaviour
(docs/design.md, Compiled execution).
"""

from __future__ import annotations
import __future__

import keyword
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from graphql.pyutils import Path, gather_with_cancel
from strawberry.execution.is_awaitable import optimized_is_awaitable as is_awaitable

from api.graphql.execution.budget import key_bytes
from api.graphql.execution.complete import SETTLED
from api.graphql.execution.protocols import PlanExecutor
from api.observability.fallbacks import fell_back
from api.settings.limits import Lane

__all__ = [
    "Failed",
    "FieldRunner",
    "FusedField",
    "InlineLeaf",
    "SelectionRunner",
    "Settle",
    "closure_selection",
    "fused_selection",
    "inlinable",
    "selection_source",
]

_LAZY_ANNOTATIONS = __future__.annotations.compiler_flag
"""The generated signature's annotations stay strings: nothing to look up."""

SelectionRunner = Callable[[PlanExecutor, Any, "Path | None"], Any]
FieldRunner = Callable[[PlanExecutor, Any, "Path | None"], Any]


Settle = Callable[[PlanExecutor, "Path | None", Any], Any]
"""Counts a leaf's key and completes a value the inline test did not take."""
Failed = Callable[[PlanExecutor, "Path | None", "Exception | None"], Any]
"""Handles a leaf's error (None: the inline count ran past the budget)."""


@dataclass(frozen=True, slots=True)
class InlineLeaf:
    """A scalar attribute written into the selection's function."""

    attribute: str
    kind: Literal["text", "bool", "enum"]
    settle: Settle
    failed: Failed
    enum: type | None = None
    members: dict[int, tuple[str, int]] | None = None
    """An enum's members by ``id``: their GraphQL name and its JSON bytes."""


@dataclass(frozen=True, slots=True)
class FusedField:
    name: str
    run: FieldRunner
    maybe_async: bool
    inline: InlineLeaf | None = None


def inlinable(attribute: str) -> bool:
    """Only a plain identifier can be written as ``source.<attribute>``."""
    return attribute.isidentifier() and not keyword.iskeyword(attribute)


def fused_selection(fields: list[FusedField]) -> SelectionRunner:
    """One function for the selection set: sibling fields start in document
    order and their awaitables are gathered, as in graphql-core, so DataLoader
    loads issued by siblings land in one batch."""
    source, namespace = selection_source(fields)
    exec(compile(source, "<compiled selection>", "exec", _LAZY_ANNOTATIONS, True), namespace)
    # Taken out of its own globals: a function in the dict it reads its names
    # from is a cycle, which would keep the plan, and the document its nodes
    # point at, alive until a full collection, past the plan cache's budget.
    run: SelectionRunner = namespace.pop("run")
    return run


def closure_selection(fields: list[FusedField]) -> SelectionRunner:
    """The selection without the ``fused`` lane: each field's closure called
    in a loop, what the generated function does for a field not inline."""
    entries = tuple((field.name, field.run, field.maybe_async) for field in fields)

    def run(executor: PlanExecutor, source: Any, path: Path | None) -> Any:
        results: dict[str, Any] = {}
        pending: list[str] | None = None
        try:
            for name, field_run, maybe_async in entries:
                value = results[name] = field_run(executor, source, path)
                if maybe_async and type(value) not in SETTLED and is_awaitable(value):
                    if pending is None:
                        pending = []
                    pending.append(name)
        except Exception:
            if pending:
                executor.settle_in_background([results[n] for n in pending])
            raise
        if pending is None:
            return results
        return _gather_fields(results, pending)

    return run


def selection_source(fields: list[FusedField]) -> tuple[str, dict[str, Any]]:
    """The generated function's source, annotated so mypy can check it (the
    annotations are never evaluated), and the names it reads: what
    ``fused_selection`` compiles, and what a test type-checks for every
    selection the suite's operations produce."""
    namespace: dict[str, Any] = {
        "is_awaitable": is_awaitable,
        "gather": _gather_fields,
        "SETTLED": SETTLED,
    }
    body: list[str] = []
    for index, field in enumerate(fields):
        body += _field_lines(index, field, namespace)
    source = "\n".join(
        [
            "def run(executor: PlanExecutor, source: Any, path: Path | None) -> Any:",
            "    budget = executor.response_bytes",
            "    results: dict[str, Any] = {}",
            "    pending: list[str] | None = None",
            "    try:",
            *("        " + line for line in body or ["pass"]),
            "    except Exception:",
            "        if pending:",
            "            executor.settle_in_background([results[n] for n in pending])",
            "        raise",
            "    if pending is None:",
            "        return results",
            "    return gather(results, pending)",
        ]
    )
    return source, namespace


def _field_lines(index: int, field: FusedField, namespace: dict[str, Any]) -> list[str]:
    key = repr(field.name)
    inline = field.inline
    if inline is None:
        namespace[f"run_{index}"] = field.run
        lines = [f"value = run_{index}(executor, source, path)", f"results[{key}] = value"]
        if field.maybe_async:
            lines += [
                "if type(value) not in SETTLED and is_awaitable(value):",
                "    if pending is None:",
                "        pending = []",
                f"    pending.append({key})",
            ]
        return lines
    namespace[f"settle_{index}"] = _counted(inline)
    namespace[f"failed_{index}"] = inline.failed
    size = key_bytes(field.name)
    test, count, output = _inline_test(index, inline, size, namespace)
    return [
        "try:",
        f"    value = source.{inline.attribute}",
        "except Exception as error:",
        f"    results[{key}] = failed_{index}(executor, path, error)",
        "else:",
        f"    if {test}:",
        f"        budget.used += {count}",
        "        if budget.used > budget.limit:",
        f"            results[{key}] = failed_{index}(executor, path, None)",
        "        else:",
        f"            results[{key}] = {output}",
        "    else:",
        f"        results[{key}] = settle_{index}(executor, path, value)",
    ]


def _inline_test(
    index: int, inline: InlineLeaf, size: int, namespace: dict[str, Any]
) -> tuple[str, str, str]:
    """The test a value passes to be its own output, the bytes it counts
    (its key's included) and the output."""
    if inline.kind == "text":
        # Printable ASCII escapes only the backslash (budget.leaf_bytes).
        test = (
            "type(value) is str and value.isascii() and value.isprintable() and '\"' not in value"
        )
        return test, f"{size + 2} + len(value) + value.count('\\\\')", "value"
    if inline.kind == "bool":
        # ``true`` is a byte shorter than ``false``, and True counts as 1.
        return "type(value) is bool", f"{size + 5} - value", "value"
    namespace[f"enum_{index}"] = inline.enum
    namespace[f"members_{index}"] = inline.members
    test = f"type(value) is enum_{index}"
    return test, f"{size} + members_{index}[id(value)][1]", f"members_{index}[id(value)][0]"


def _counted(inline: InlineLeaf) -> Settle:
    """The closure a value the inline test did not take goes to: a None is
    the closure's by design, anything else a fallback counted by its type."""
    settle = inline.settle
    kind = inline.kind

    def counted(executor: PlanExecutor, path: Path | None, value: Any) -> Any:
        if value is not None:
            fell_back(Lane.FUSED, f"{kind} leaf of type {type(value).__name__}")
        return settle(executor, path, value)

    return counted


async def _gather_fields(results: dict[str, Any], pending: list[str]) -> dict[str, Any]:
    if len(pending) == 1:
        name = pending[0]
        results[name] = await results[name]
        return results
    settled = await gather_with_cancel(*(results[name] for name in pending))
    results.update(zip(pending, settled, strict=True))
    return results
