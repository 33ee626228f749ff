"""The smallest context value the compiled executor runs on: what
``api.graphql.execution.protocols.OperationContext`` asks for, and no more."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Self

from api.graphql.execution.protocols import OperationContext

__all__ = ["Context", "Viewer"]


@dataclass(frozen=True)
class Viewer:
    role: str = "ANONYMOUS"
    brand_id: str | None = None


@dataclass
class Context:
    principal: Viewer = field(default_factory=Viewer)
    execution: str | None = None

    def for_operation(self) -> Self:
        return self


def _satisfies(context: Context) -> OperationContext:
    return context
