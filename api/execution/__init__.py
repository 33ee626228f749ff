"""Compiled execution: operations run as plans compiled once per document."""

from .cache import PlanCache
from .executor import COMPILED, GRAPHQL_CORE, CompiledExecutor, compiled_executor
from .plan import OperationPlan, Unsupported, compile_operation

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
