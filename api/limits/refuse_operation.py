"""Refusing an operation from an ``on_execute`` hook, before any resolver runs."""

from __future__ import annotations

from graphql import ExecutionResult, GraphQLError
from strawberry.types import ExecutionContext
from strawberry.types.graphql import OperationType

from domain.errors import ProofgateError

__all__ = ["refuse"]


def refuse(execution_context: ExecutionContext, error: ProofgateError) -> None:
    """Answer with ``error`` instead of executing.

    A result set here is used in place of execution, and its errors reach the
    error mapping like any other. Subscriptions start regardless of a result,
    so for them the error is raised: Strawberry turns an error raised in
    ``on_execute`` into the stream's one (mapped) result.
    """
    graphql_error = GraphQLError(error.message, original_error=error)
    if execution_context.operation_type is OperationType.SUBSCRIPTION:
        raise graphql_error
    execution_context.result = ExecutionResult(data=None, errors=[graphql_error])
