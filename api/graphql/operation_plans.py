"""Registered operations prepared once, at start-up: each document parsed
and pinned in the schema's document cache, each query and mutation compiled
into its plan and pinned in the plan cache, so a call by name, by hash or
by text starts at execution (docs/design.md, "Named operations").

Plans are compiled for the operation's largest variables, the values its
cost was measured at (``@include`` taken); other ``@skip``/``@include``
values compile on first use and are kept alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphql import DocumentNode, OperationDefinitionNode

from api.graphql.execution import CompiledExecutor, PlanCache
from api.operations.largest_variables import largest_variables
from api.operations.registry import OperationRegistry
from domain.errors import ConfigurationError

if TYPE_CHECKING:
    from api.graphql.schema import ProofgateSchema

__all__ = ["prepare_operations"]


def prepare_operations(
    schema: ProofgateSchema, registry: OperationRegistry, max_tokens: int
) -> int:
    """Pins every registered document; returns how many plans it compiled."""
    documents = schema.document_cache
    plans: PlanCache | None = getattr(schema.execution_context_class, "plans", None)
    if documents is None:
        return 0
    compiled = 0
    for text in registry.by_hash.values():
        document = documents.pin(text, max_tokens)
        if plans is None:
            continue
        for definition in document.definitions:
            if not isinstance(definition, OperationDefinitionNode) or definition.name is None:
                continue
            if definition.operation.value != "subscription":
                compiled += _compile(schema, plans, document, definition)
    return compiled


def _compile(
    schema: ProofgateSchema,
    plans: PlanCache,
    document: DocumentNode,
    definition: OperationDefinitionNode,
) -> bool:
    """False: the operation is left to graphql-core (``Unsupported``)."""
    assert definition.name is not None
    built = schema.execution_context_class.build(
        schema.graphql_schema,
        document,
        raw_variable_values=largest_variables(schema.graphql_schema, definition),
        operation_name=definition.name.value,
    )
    if isinstance(built, list):
        raise ConfigurationError(f"{definition.name.value}: {built[0].message}")
    assert isinstance(built, CompiledExecutor)
    plans.pin(built.operation, built.fragment_definitions.values())
    return built.compiled_plan() is not None
