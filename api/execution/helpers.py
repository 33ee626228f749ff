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
``gather`` then does what graphql-core's does, and its ``track`` settles the
awaitables as ``settle_in_background`` does, tracked by no execution, since
none is left to wait for them.
"""

from __future__ import annotations

import asyncio
import inspect
import weakref
from collections.abc import Awaitable, Sequence
from typing import Any

from graphql import GraphQLResolveInfoHelpers
from graphql.execution.executor import Executor
from graphql.pyutils import gather_with_cancel

__all__ = ["weak_helpers"]

_UNTRACKED: set[asyncio.Future[Any]] = set()
"""Background work of ended executions, each until it settles (no execution
holds it any more, and the loop keeps only weak references to tasks)."""


def weak_helpers(executor: Executor[Any]) -> GraphQLResolveInfoHelpers:
    reference = weakref.ref(executor)

    def gather(values: Sequence[Awaitable[Any]]) -> Awaitable[list[Any]]:
        alive = reference()
        if alive is None:
            return gather_with_cancel(*values)
        return alive.gather_async_work(values)

    def track(values: Sequence[Any]) -> None:
        alive = reference()
        if alive is not None:
            alive.track_async_work(values)
            return
        _settle_untracked([value for value in values if inspect.isawaitable(value)])

    return GraphQLResolveInfoHelpers(gather=gather, track=track)


def _settle_untracked(awaitables: list[Awaitable[Any]]) -> None:
    if not awaitables:
        return
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no loop: they can never run (settle_in_background)
        for awaitable in awaitables:
            if inspect.iscoroutine(awaitable):
                awaitable.close()
        return
    future = asyncio.gather(*awaitables, return_exceptions=True)
    _UNTRACKED.add(future)
    future.add_done_callback(_UNTRACKED.discard)
