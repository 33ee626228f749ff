"""Deferred work (@defer, @stream) reads within its operation's read budget.

graphql-core runs a deferred fragment when its increment is asked for, as
the response is written, after the operation's read limit
(``api/limits/read_budget.py``) has let go; the executor hands the increments
on wrapped, each step inside the budget the initial part read within
(docs/design.md, Incremental delivery).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any, TypeVar

from graphql import ExperimentalIncrementalExecutionResults

from storage.budget import ReadBudget, current_budget, reading_within

__all__ = ["within_read_budget"]

_Response = TypeVar("_Response")


def within_read_budget(response: _Response) -> _Response:
    """``response``, its increments (if any) read within the budget its
    initial part read within: graphql-core runs deferred work as the
    increments are asked for, after the operation's read limit has let go."""
    budget = current_budget()
    if budget is None or not isinstance(response, ExperimentalIncrementalExecutionResults):
        return response
    return response._replace(subsequent_results=_reading(budget, response.subsequent_results))


async def _reading(
    budget: ReadBudget, results: AsyncGenerator[Any, None]
) -> AsyncGenerator[Any, None]:
    """Each step inside the budget, each yield outside it: the consumer's
    context is not this generator's to change between steps."""
    try:
        while True:
            with reading_within(budget):
                try:
                    result = await anext(results)
                except StopAsyncIteration:
                    return
            yield result
    finally:
        await results.aclose()
