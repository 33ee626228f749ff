"""A subscription's planned reads per alert, handed to its resolver.

``CostBudget`` refuses an operation over the per-operation budget; a
subscription's cost is also held against its brand's budget for as long as it
lives (docs/design.md, Subscription limits), which only the resolver that
registers it can do, so the cost travels to it in ``OPERATION_COST``.
"""

from __future__ import annotations

from collections.abc import Iterator

from strawberry.extensions import SchemaExtension
from strawberry.types.graphql import OperationType

from api.limits.cost import cost_model
from domain.errors import ProofgateError
from resolvers.context import OPERATION_COST

__all__ = ["SubscriptionCost"]


class SubscriptionCost(SchemaExtension):
    def on_execute(self) -> Iterator[None]:
        execution_context = self.execution_context
        document = execution_context.graphql_document
        cost = None
        if (
            execution_context.result is None
            and document is not None
            and execution_context.operation_type is OperationType.SUBSCRIPTION
        ):
            try:
                cost = cost_model(execution_context.schema).measure(
                    document, execution_context.operation_name, execution_context.variables
                )
            except ProofgateError:
                cost = None  # refused by ``CostBudget`` already
        if cost is None:
            yield
            return
        token = OPERATION_COST.set(cost)
        try:
            yield
        finally:
            OPERATION_COST.reset(token)
