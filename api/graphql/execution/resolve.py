"""Calling a Strawberry field's resolver without Strawberry's per-call wrapper.

For a field with no GraphQL arguments, no field extensions and no exception
handlers, Strawberry's wrapper does nothing a plan cannot decide once: it
converts no arguments, and only chooses whether the resolver gets the source
as ``self`` and a Strawberry ``Info`` (here one that builds graphql-core's
resolve info only if read: ``lazy_info.py``). An attribute read becomes an
``attrgetter``. Anything else keeps Strawberry's wrapper, and so does a
subscription field, whose resolver for an event returns the event.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from graphql import GraphQLSchema
from graphql.pyutils import Path
from strawberry.types.field import StrawberryField

from api.graphql.execution.lazy_info import Site, lazy_info_class

if TYPE_CHECKING:
    from api.graphql.execution.executor import CompiledExecutor

__all__ = ["Direct", "direct_resolver"]

_DEFINITION = "strawberry-definition"


@dataclass(frozen=True, slots=True)
class Direct:
    """Exactly one of ``of_source`` and ``with_info`` is set."""

    of_source: Callable[[Any], Any] | None
    """The call for a field that reads nothing but its source."""
    with_info: Callable[[CompiledExecutor, Any, Path], Any] | None
    """The call for a resolver that takes Strawberry's ``Info``, on a source at a path."""
    sync: bool
    """An attribute read: never an awaitable."""
    attribute: str | None = None
    """The attribute an attribute read reads."""


def direct_resolver(schema: GraphQLSchema, site: Site) -> Direct | None:
    field_def = site[0]
    field = (field_def.extensions or {}).get(_DEFINITION)
    strawberry_schema = getattr(schema, "_strawberry_schema", None)
    if (
        not isinstance(field, StrawberryField)
        or strawberry_schema is None
        or strawberry_schema.exception_handlers
        or field.extensions
        or field_def.args
        or field.is_subscription
    ):
        return None
    resolver = field.base_resolver
    if resolver is None:
        if field.default_resolver is not getattr:
            return None
        return Direct(attrgetter(field.python_name), None, sync=True, attribute=field.python_name)
    if resolver.parent_parameter or resolver.root_parameter or not resolver.self_parameter:
        return None
    info = resolver.info_parameter
    # The function itself: the resolver's ``__call__`` only checks that it is
    # callable (raising otherwise, as calling the resolver still does) and
    # passes every argument on, a frame per product and field of a page.
    function = resolver.wrapped_func
    call: Callable[..., Any] = function if callable(function) else resolver
    if info is None:
        return Direct(call, None, sync=False)
    lazy_info = lazy_info_class(strawberry_schema.config.info_class)
    if lazy_info is None:
        return None
    name = info.name
    if _second_positional(resolver.wrapped_func) == name:

        def positional(executor: CompiledExecutor, source: Any, path: Path) -> Any:
            return call(source, lazy_info(executor, site, path, field))

        return Direct(None, positional, sync=False)

    def by_name(executor: CompiledExecutor, source: Any, path: Path) -> Any:
        return call(source, **{name: lazy_info(executor, site, path, field)})

    return Direct(None, by_name, sync=False)


def _second_positional(function: Any) -> str | None:
    """The name of the parameter after ``self``, when it can be passed by position."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return None
    if len(parameters) < 2 or parameters[1].kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD:
        return None
    return parameters[1].name
