"""Value completion decided by the return type at compile time.

graphql-core inspects a field's return type for every value it completes; a
plan builds one closure per type instead, and knows which of them can ever
return an awaitable, so sync values skip the awaitable checks.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from types import GeneratorType
from typing import TYPE_CHECKING, Any

from graphql import GraphQLError, GraphQLLeafType, GraphQLOutputType, Undefined
from graphql.pyutils import Path, gather_with_cancel, inspect, is_iterable
from strawberry.execution.is_awaitable import optimized_is_awaitable as is_awaitable

from api.graphql.execution.budget import leaf_bytes
from api.graphql.execution.leaf_coercion import leaf_passthrough
from api.graphql.execution.protocols import PlanExecutor

if TYPE_CHECKING:
    from graphql.execution.collect_fields import FieldDetailsList


__all__ = [
    "PLAIN",
    "SETTLED",
    "Completer",
    "awaitable",
    "complete_leaf",
    "complete_list",
    "complete_non_null",
    "complete_object",
    "complete_text",
    "new_tuple",
    "null_message",
]

Completer = Callable[[PlanExecutor, Path, Any], Any]
"""Completes a resolved value at ``path``; returns it, or an awaitable of it."""

new_tuple = tuple.__new__
"""``new_tuple(Path, (prev, key, typename))`` is ``Path(prev, key, typename)``
in half the time of the named tuple's own ``__new__``: a plan makes one per
object field and list item."""

SETTLED = frozenset({type(None), bool, int, float, str, list, dict})
"""Types never awaitable, tested before ``is_awaitable``: a completed object
is a dict, and testing its type costs no call."""

PLAIN: set[type] = set(SETTLED)
"""``SETTLED`` and the classes of values found not awaitable whose class has
no ``__await__`` (a resolver's objects): ``is_awaitable`` asks such a value
for an attribute it lacks, every time. An instance's own ``__await__``
attribute is then not looked for again; ``await`` ignores one too, as it reads
the class. Bounded by ``PLAIN_LIMIT``."""
PLAIN_LIMIT = 512


def awaitable(value: Any) -> bool:
    """``is_awaitable``, remembering a plain class (test ``PLAIN`` first)."""
    if is_awaitable(value):
        return True
    kind = type(value)
    # A generator is awaitable or not by its code's flags, not by its class.
    if (
        len(PLAIN) < PLAIN_LIMIT
        and kind is not GeneratorType
        and not hasattr(kind, "__await__")
        and not isinstance(value, type)
    ):
        PLAIN.add(kind)
    return False


def complete_leaf(return_type: GraphQLLeafType) -> Completer:
    coerce = return_type.coerce_output_value
    passes = leaf_passthrough(return_type)

    def complete(executor: PlanExecutor, path: Path, value: Any) -> Any:
        kind = type(value)
        if kind in passes:
            passed = passes[kind](value)
            executor.response_bytes.charge(leaf_bytes(passed))
            return passed
        if isinstance(value, Exception):
            raise value
        if value is None or value is Undefined:
            return None
        coerced = coerce(value)
        if coerced is Undefined or coerced is None:
            msg = (
                f"Expected `{inspect(return_type)}.coerce_output_value("
                f"{inspect(value)})` to return non-nullable value, returned:"
                f" {inspect(coerced)}"
            )
            raise TypeError(msg)
        executor.response_bytes.charge(leaf_bytes(coerced))
        return coerced

    return complete


def complete_text(general: Completer) -> Completer:
    """String and ID, nullable or not: a printable ASCII ``str`` without a quote
    is its own output, and its JSON size (``leaf_bytes``) is counted inline;
    any other value goes to ``general``. Most leaves of most responses are such
    strings, and this saves three calls on each."""

    def complete(executor: PlanExecutor, path: Path, value: Any) -> Any:
        if type(value) is str and value.isascii() and value.isprintable() and '"' not in value:
            budget = executor.response_bytes
            budget.used += len(value) + 2 + value.count("\\")
            if budget.used > budget.limit:
                budget.charge(0)
            return value
        return general(executor, path, value)

    return complete


def null_message(parent_name: str, field_name: str) -> str:
    return f"Cannot return null for non-nullable field {parent_name}.{field_name}."


def complete_non_null(inner: Completer, parent_name: str, field_name: str) -> Completer:
    """An awaitable from ``inner`` (an object or a list) never settles to None,
    so, as in graphql-core, only a sync None is an error here."""
    message = null_message(parent_name, field_name)

    def complete(executor: PlanExecutor, path: Path, value: Any) -> Any:
        completed = inner(executor, path, value)
        if completed is None:
            raise TypeError(message)
        return completed

    return complete


def complete_object(
    selection: Callable[[PlanExecutor, Any, Path], Any],
    non_null: str | None = None,
    checked: tuple[str, tuple[type, ...]] | None = None,
) -> Completer:
    """``non_null``: the error for a None, for a non-null field (a selection
    never answers None, so this is ``complete_non_null`` of the nullable form).
    ``checked``: the type's name and the classes its ``is_type_of`` accepts
    (a type implementing an interface), checked as graphql-core checks them."""

    def complete(executor: PlanExecutor, path: Path, value: Any) -> Any:
        if isinstance(value, Exception):
            raise value
        if value is None or value is Undefined:
            if non_null is not None:
                raise TypeError(non_null)
            return None
        return selection(executor, value, path)

    if checked is None:
        return complete
    name, classes = checked
    passed = (*classes, Exception, type(None), type(Undefined))
    """What ``complete`` itself answers, besides the type's own objects."""

    def complete_checked(executor: PlanExecutor, path: Path, value: Any) -> Any:
        if not isinstance(value, passed):
            raise GraphQLError(f"Expected value of type '{name}' but got: {inspect(value)}.")
        return complete(executor, path, value)

    return complete_checked


def complete_list(
    item: Completer,
    item_type: GraphQLOutputType,
    item_async: bool,
    details: FieldDetailsList,
    not_iterable: str,
) -> Completer:
    """Items complete like graphql-core's ``complete_iterable_value``: an
    item's error nulls the item (or, for a non-null item, the list), and the
    awaitable items are gathered together so their DataLoader loads batch."""

    def complete(executor: PlanExecutor, path: Path, value: Any) -> Any:
        if isinstance(value, Exception):
            raise value
        if value is None or value is Undefined:
            return None
        if not is_iterable(value):
            raise GraphQLError(not_iterable)
        results: list[Any] = []
        pending: list[int] = []
        try:
            for index, entry in enumerate(value):
                item_path = new_tuple(Path, (path, index, None))
                if type(entry) not in PLAIN and awaitable(entry):
                    results.append(
                        _await_item(executor, item, item_type, details, item_path, entry)
                    )
                    pending.append(index)
                    continue
                try:
                    completed = item(executor, item_path, entry)
                except Exception as raw_error:
                    executor.handle_field_error(raw_error, item_type, details, item_path)
                    completed = None
                if item_async and type(completed) not in SETTLED and is_awaitable(completed):
                    completed = _guard_item(executor, item_type, details, item_path, completed)
                    pending.append(index)
                results.append(completed)
        except Exception:
            executor.settle_in_background([results[index] for index in pending])
            raise
        if not pending:
            return results
        return _gather_items(executor, results, pending)

    return complete


async def _await_item(
    executor: PlanExecutor,
    item: Completer,
    item_type: GraphQLOutputType,
    details: FieldDetailsList,
    path: Path,
    entry: Awaitable[Any],
) -> Any:
    try:
        completed = item(executor, path, await entry)
        if is_awaitable(completed):
            completed = await completed
    except Exception as raw_error:
        executor.handle_field_error(raw_error, item_type, details, path)
        return None
    return completed


async def _guard_item(
    executor: PlanExecutor,
    item_type: GraphQLOutputType,
    details: FieldDetailsList,
    path: Path,
    completed: Awaitable[Any],
) -> Any:
    try:
        return await completed
    except Exception as raw_error:
        executor.handle_field_error(raw_error, item_type, details, path)
        return None


async def _gather_items(
    executor: PlanExecutor, results: list[Any], pending: list[int]
) -> list[Any]:
    if len(pending) == 1:
        index = pending[0]
        results[index] = await results[index]
        return results
    settled = await gather_with_cancel(*(results[index] for index in pending))
    for index, value in zip(pending, settled, strict=True):
        results[index] = value
    return results
