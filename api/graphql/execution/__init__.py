"""Compiled execution: operations run as plans compiled once per document."""

from api.graphql.execution.cache import PlanCache
from api.graphql.execution.executor import (
    COMPILED,
    GRAPHQL_CORE,
    CompiledExecutor,
    compiled_executor,
)
from api.graphql.execution.plan import OperationPlan, Unsupported, compile_operation

__all__ = [
    "COMPILED",
    "GRAPHQL_CORE",
    "CompiledExecutor",
    "OperationPlan",
    "PlanCache",
    "Unsupported",
    "compile_operation",
    "compiled_executor",
]
