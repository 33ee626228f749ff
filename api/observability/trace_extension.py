"""``X-Proofgate-Trace: 1``: report what a request cost in ``extensions.trace``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from strawberry.extensions import SchemaExtension

from resolvers.context import request_context
from storage.trace import tracing

__all__ = ["StorageTracing"]


class StorageTracing(SchemaExtension):
    def on_operation(self) -> Iterator[None]:
        context = request_context(self.execution_context.context)
        trace = context.trace if context is not None else None
        if trace is None:
            yield
            return
        with tracing(trace):
            yield

    def get_results(self) -> dict[str, Any]:
        context = request_context(self.execution_context.context)
        trace = context.trace if context is not None else None
        if context is None or trace is None:
            return {}
        return {
            "trace": {
                "execution": context.execution,
                "accessPatterns": trace.access_patterns,
                "storageCalls": trace.storage_calls,
                "items": trace.items,
                "capacityUnits": trace.capacity,
                "calls": [
                    {
                        "operation": c.operation,
                        "accessPattern": c.access_pattern,
                        "items": c.items,
                        "capacityUnits": c.capacity,
                    }
                    for c in trace.calls
                ],
            }
        }
