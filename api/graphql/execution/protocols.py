"""The two surfaces compiled execution depends on, as Protocols.

``PlanExecutor`` is what plans, completers, fused selections and lazy infos
ask of the executor running them: graphql-core's execution context, plus
the response budget. They annotate against it, not ``CompiledExecutor``,
which imports them (so no cycle, not even under TYPE_CHECKING).

``OperationContext`` is what the executor asks of the app's context value:
a copy per operation, its DataLoaders, whose principal decides which subscribers may share
an event's execution, and where to say which executor ran. The gateway's
``RequestContext`` and ``SocketContext`` satisfy it; nothing here imports them.
A schema executed without a context (graphql-core allows it) runs as nobody.
"""

from __future__ import annotations

from collections.abc import Awaitable, Hashable
from typing import Any, Protocol

from graphql import (
    GraphQLField,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLResolveInfo,
    GraphQLSchema,
    OperationDefinitionNode,
)
from graphql.execution.collect_fields import FieldDetailsList, FragmentDetails
from graphql.execution.values import VariableValues
from graphql.language import FieldNode, FragmentDefinitionNode
from graphql.pyutils import Path

from api.graphql.execution.budget import ResponseBytes

__all__ = ["Loads", "OperationContext", "PlanExecutor", "Viewer"]


class PlanExecutor(Protocol):
    """Read when a plan compiles: the schema, operation, fragments and
    variables; while it runs: the context, the budget and error handling."""

    @property
    def schema(self) -> GraphQLSchema: ...

    @property
    def operation(self) -> OperationDefinitionNode: ...

    @property
    def fragments(self) -> dict[str, FragmentDetails]: ...

    @property
    def fragment_definitions(self) -> dict[str, FragmentDefinitionNode]: ...

    @property
    def variable_values(self) -> VariableValues: ...

    @property
    def hide_suggestions(self) -> bool: ...

    @property
    def context_value(self) -> Any: ...

    @property
    def response_bytes(self) -> ResponseBytes: ...

    def build_resolve_info(
        self,
        field_def: GraphQLField,
        field_nodes: list[FieldNode],
        parent_type: GraphQLObjectType,
        path: Path,
    ) -> GraphQLResolveInfo[Any]: ...

    def handle_field_error(
        self,
        raw_error: Exception,
        return_type: GraphQLOutputType,
        field_details_list: FieldDetailsList,
        path: Path,
    ) -> None: ...

    def settle_in_background(self, awaitables: list[Awaitable[Any]]) -> None: ...


class Viewer(Protocol):
    """Who runs an operation, as far as what it may see goes."""

    @property
    def role(self) -> Hashable: ...

    @property
    def brand_id(self) -> str | None: ...


class Loads(Protocol):
    single: frozenset[str]
    """Access patterns the running plan loads one key at a time (no batch to wait for)."""


class OperationContext(Protocol):
    execution: str | None
    """Set to the executor that ran the operation: "compiled" or "graphql-core"."""

    @property
    def principal(self) -> Viewer:
        """Subscribers whose principals have the same role and brand see the
        same data, so they may share an event's execution (docs/design.md,
        Alert fan-out)."""
        ...

    @property
    def loaders(self) -> Loads:
        """The operation's DataLoaders."""
        ...

    def for_operation(self) -> OperationContext:
        """The context one operation (or one subscription event) runs on:
        itself for a request, a copy with fresh DataLoaders for a WebSocket."""
        ...
