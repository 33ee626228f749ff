"""Calling a Strawberry field's resolver without Strawberry's per-call wrapper.

For a field with no GraphQL arguments, no field extensions and no exception
handlers, Strawberry's wrapper does nothing a plan cannot decide once: it
converts no arguments, and only chooses whether the resolver gets the source
as ``self`` and a Strawberry ``Info``, and calls the function it wraps. An
attribute read becomes an ``attrgetter``. Anything else keeps Strawberry's wrapper, and so does a
subscription field, whose resolver for an event returns the event.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from graphql import GraphQLField, GraphQLResolveInfo, GraphQLSchema
from strawberry.types.field import StrawberryField

__all__ = ["Direct", "direct_resolver"]

_DEFINITION = "strawberry-definition"


@dataclass(frozen=True, slots=True)
class Direct:
    """Exactly one of ``of_source`` and ``with_info`` is set."""

    of_source: Callable[[Any], Any] | None
    """The call for a field that reads nothing but its source."""
    with_info: Callable[[Any, GraphQLResolveInfo[Any]], Any] | None
    """The call for a resolver that takes Strawberry's ``Info``."""
    sync: bool
    """An attribute read: never an awaitable."""
    attribute: str | None = None
    """The attribute an attribute read reads."""


def direct_resolver(schema: GraphQLSchema, field_def: GraphQLField) -> Direct | None:
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
    # What ``StrawberryResolver.__call__`` calls, once it has checked it can.
    function = resolver.wrapped_func
    if (
        resolver.parent_parameter
        or resolver.root_parameter
        or not resolver.self_parameter
        or not callable(function)
    ):
        return None
    info = resolver.info_parameter
    if info is None:
        return Direct(function, None, sync=False)
    info_class, name = strawberry_schema.config.info_class, info.name

    def with_info(source: Any, raw: GraphQLResolveInfo[Any]) -> Any:
        return function(source, **{name: info_class(_raw_info=raw, _field=field)})

    return Direct(None, with_info, sync=False)
