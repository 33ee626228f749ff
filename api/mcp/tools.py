"""Registered operations marked as tools, checked once at start-up.

A comment block right above an operation whose first line is ``@tool``
marks it; words after the mark say more: ``public`` (anonymous agents may
list and call it), ``idempotent`` (a repeat with the same arguments changes
nothing more) and ``additive`` (a mutation that only adds or marks, never
removes or overwrites). The other lines are the tool's description. A query
is read-only; a mutation says so in its description and its annotations
(docs/design.md, "MCP tools").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from graphql import GraphQLSchema, OperationDefinitionNode, parse

from api.mcp.inputs import input_schema
from api.operations.registry import OperationRegistry, RegisteredOperation
from domain.errors import ConfigurationError

__all__ = ["TOOL_MARK", "ToolSpec", "tool_specs"]

TOOL_MARK = "@tool"
_FLAGS = frozenset({"public", "idempotent", "additive"})


@dataclass(frozen=True)
class ToolSpec:
    """What the MCP ``Tool`` says, without the SDK: the gateway checks its
    tools at start-up and loads the SDK only when an agent connects."""

    operation: RegisteredOperation
    description: str | None
    input_schema: dict[str, Any]
    annotations: dict[str, bool]
    """MCP tool annotations by their wire names (``readOnlyHint``, ...)."""
    public: bool

    @property
    def name(self) -> str:
        return self.operation.name


def tool_specs(schema: GraphQLSchema, registry: OperationRegistry) -> Mapping[str, ToolSpec]:
    """Raises ``ConfigurationError`` naming the file of a bad mark."""
    specs: dict[str, ToolSpec] = {}
    for operation in registry.by_name.values():
        if not operation.comment or operation.comment[0].split()[:1] != [TOOL_MARK]:
            continue
        flags = set(operation.comment[0].split()[1:])
        unknown = flags - _FLAGS
        if unknown:
            raise ConfigurationError(
                f"Invalid operation file {operation.source}: {operation.name} is marked with "
                f"unknown {TOOL_MARK} words {', '.join(sorted(unknown))} "
                f"(known: {', '.join(sorted(_FLAGS))})"
            )
        if operation.kind == "subscription":
            raise ConfigurationError(
                f"Invalid operation file {operation.source}: {operation.name} is a "
                "subscription, which cannot be a tool"
            )
        specs[operation.name] = _spec(schema, operation, flags)
    return specs


def _spec(schema: GraphQLSchema, operation: RegisteredOperation, flags: set[str]) -> ToolSpec:
    definition = _definition(operation)
    text = " ".join(line for line in operation.comment[1:] if line)
    query = operation.kind == "query"
    annotations = {"readOnlyHint": query, "openWorldHint": False}
    if not query:
        text = f"Changes data (runs the mutation {operation.name}). {text}"
        annotations["destructiveHint"] = "additive" not in flags
        annotations["idempotentHint"] = "idempotent" in flags
    return ToolSpec(
        operation=operation,
        description=text.strip() or None,
        input_schema=input_schema(schema, definition),
        annotations=annotations,
        public="public" in flags,
    )


def _definition(operation: RegisteredOperation) -> OperationDefinitionNode:
    for definition in parse(operation.text).definitions:
        name = getattr(definition, "name", None)
        if (
            isinstance(definition, OperationDefinitionNode)
            and name
            and name.value == operation.name
        ):
            return definition
    raise AssertionError(f"{operation.name} is not in its own document")
