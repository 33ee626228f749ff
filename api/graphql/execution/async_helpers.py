"""The resolvers' ``info.async_helpers``, held without a cycle.

graphql-core gives every executor ``GraphQLResolveInfoHelpers`` made of two of
its own bound methods: executor -> helpers -> method -> executor. That one
cycle makes everything the executor holds, the request's context, its
loaders and each item they read, garbage that only the cycle collector
frees: about 290 objects a page of 50, and a collection every other request
that stalls whichever requests are in flight. Here the helpers reach the
executor through a weak reference, so a request's objects are freed when its
response is built (docs/design.md, Compiled execution).

While the execution runs, its own frames hold the executor, and the helpers
call its methods exactly. A resolver left running past the execution (a
sibling of a failed field, settled in the background) finds it gone; its
helpers then call graphql-core's same methods on a stand-in that no
execution waits for.
"""

from __future__ import annotations

import asyncio
import inspect
import weakref
from collections.abc import Awaitable, Sequence
from typing import Any

from graphql import GraphQLResolveInfoHelpers
from graphql.execution.executor import Executor

__all__ = ["weak_helpers"]


class _Ended:
    """An ended execution, as far as its helpers go: graphql-core's own
    ``gather_async_work``, ``track_async_work`` and ``settle_in_background``,
    with a set of background work of its own, each entry until it settles."""

    is_awaitable = staticmethod(inspect.isawaitable)
    gather_async_work = Executor.gather_async_work
    track_async_work = Executor.track_async_work
    settle_in_background = Executor.settle_in_background

    def __init__(self) -> None:
        self.background_futures: set[asyncio.Future[Any]] = set()


_ENDED: Any = _Ended()


def weak_helpers(executor: Executor[Any]) -> GraphQLResolveInfoHelpers:
    reference = weakref.ref(executor)

    def gather(values: Sequence[Awaitable[Any]]) -> Awaitable[list[Any]]:
        result: Awaitable[list[Any]] = (reference() or _ENDED).gather_async_work(values)
        return result

    def track(values: Sequence[Any]) -> None:
        (reference() or _ENDED).track_async_work(values)

    return GraphQLResolveInfoHelpers(gather=gather, track=track)
