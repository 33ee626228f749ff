"""One subscription event, executed once for every subscriber who would get
the same answer.

An alert fanned out to N subscribers of one operation runs N identical
executions unless they share one: subscribers share when their event is the
same object, their plan is the same (same operation, same ``@skip``/
``@include`` values), their variables are equal and they see the same data
(same role and brand). The shared result is immutable from here on: each
subscriber gets its own ``ExecutionResult`` over the same data and errors, and
error mapping builds new error objects rather than changing these.

What subscribers share by is worked out once per subscription, as one
``Sharers`` object per (plan, visibility, variables) that lives while a
subscription holds it, so an event's key is that object and the event's id:
nothing is compared or hashed field by field per subscriber and event.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from graphql import ExecutionResult

from api.settings.limits import SHARED_EVENTS

__all__ = ["SHARED_EVENTS", "SharedEvents", "Sharers"]


Result = ExecutionResult | Awaitable[ExecutionResult]


@dataclass(slots=True)
class _Shared:
    event: Any
    """Held so the event's id is not reused while its entry lives."""
    result: ExecutionResult | asyncio.Future[ExecutionResult]


class Sharers:
    """The subscriptions that get the same answer to the same event."""

    __slots__ = ("__weakref__", "plan")

    def __init__(self, plan: Any) -> None:
        self.plan = plan


class SharedEvents:
    def __init__(self, max_items: int = SHARED_EVENTS) -> None:
        self.max_items = max_items
        self.executed = 0
        self.shared = 0
        self._entries: OrderedDict[tuple[Any, ...], _Shared] = OrderedDict()
        self._sharers: weakref.WeakValueDictionary[tuple[Any, ...], Sharers] = (
            weakref.WeakValueDictionary()
        )

    def __len__(self) -> int:
        return len(self._entries)

    def sharers(self, plan: Any, visibility: tuple[Any, ...], variables: str) -> Sharers:
        """One object for equal arguments, while any subscription holds it."""
        identity = (plan, visibility, variables)
        sharers = self._sharers.get(identity)
        if sharers is None:
            sharers = self._sharers[identity] = Sharers(plan)
        return sharers

    def answered(self, key: tuple[Any, ...], event: Any) -> Result | None:
        """The subscriber's own result of ``event`` if it already ran (or is running)."""
        entry = self._entries.get(key)
        if entry is None or entry.event is not event:
            return None
        self.shared += 1
        if isinstance(entry.result, ExecutionResult):
            return _own(entry.result)
        return _own_later(entry.result)

    def result(self, key: tuple[Any, ...], event: Any, execute: Callable[[], Result]) -> Result:
        answer = self.answered(key, event)
        if answer is not None:
            return answer
        self.executed += 1
        result = execute()
        if isinstance(result, ExecutionResult):
            self._keep(key, _Shared(event, result))
            return _own(result)
        future = asyncio.ensure_future(result)
        self._keep(key, _Shared(event, future))
        return _own_later(future)

    def _keep(self, key: tuple[Any, ...], entry: _Shared) -> None:
        self._entries[key] = entry
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_items:
            self._entries.popitem(last=False)


def _own(result: ExecutionResult) -> ExecutionResult:
    return ExecutionResult(result.data, list(result.errors) if result.errors else None)


async def _own_later(future: asyncio.Future[ExecutionResult]) -> ExecutionResult:
    return _own(await asyncio.shield(future))
