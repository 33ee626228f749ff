"""Each query and mutation reads within ``PROOFGATE_MAX_READ_ITEMS`` and
``PROOFGATE_MAX_READ_UNITS`` (docs/design.md, Limits and cost).

The cost budget refuses what an operation plans to read; this one stops what
it actually reads, whatever the plan missed. A subscription is left out: it
lives for hours, and each of its events is one read of the alert it carries.
"""

from __future__ import annotations

from collections.abc import Iterator

from strawberry.extensions import SchemaExtension
from strawberry.types.graphql import OperationType

from storage.budget import ReadBudget, reading_within

__all__ = ["ReadLimit"]


class ReadLimit(SchemaExtension):
    def __init__(self, *, max_items: int, max_units: int) -> None:
        self.max_items = max_items
        self.max_units = max_units

    def on_execute(self) -> Iterator[None]:
        if self._is_subscription():
            yield
            return
        with reading_within(ReadBudget(self.max_items, self.max_units)):
            yield

    def _is_subscription(self) -> bool:
        try:
            return self.execution_context.operation_type is OperationType.SUBSCRIPTION
        except Exception:
            # No operation to run: nothing will read.
            return False
