"""Calling a Strawberry field's resolver without Strawberry's per-call wrapper.

For a field with no field extensions and no exception handlers whose
arguments, if any, are plain scalars (which Strawberry passes on as
graphql-core coerced them, under their Python names) or leaf input types
(``resolvers/leaf_inputs.py``, built here by the type's own builder, as
Strawberry's conversion builds them), Strawberry's wrapper does nothing a
plan cannot decide once: it only chooses whether the resolver
gets the source as ``self`` and a Strawberry ``Info`` (here one that builds
graphql-core's resolve info only if read: ``lazy_info.py``). An attribute
read becomes an ``attrgetter``. Anything else keeps Strawberry's wrapper
(any other input type, an enum or a list argument, a resolver with
arguments but no ``Info``), and so does a subscription field, whose resolver for an event
returns the event.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from graphql import GraphQLSchema
from graphql.pyutils import Path
from strawberry.scalars import ID
from strawberry.types.base import StrawberryMaybe, StrawberryOptional, get_object_definition
from strawberry.types.field import StrawberryField

from api._strawberry import strawberry_schema_of
from api.graphql.execution.lazy_info import Site, lazy_info_class
from api.graphql.execution.protocols import PlanExecutor
from resolvers.leaf_inputs import LeafBuilder

__all__ = ["Argument", "Direct", "direct_resolver"]

_DEFINITION = "strawberry-definition"


@dataclass(frozen=True, slots=True)
class Direct:
    """Exactly one of ``of_source`` and ``with_info`` is set."""

    of_source: Callable[[Any], Any] | None
    """The call for a field that reads nothing but its source."""
    with_info: Callable[..., Any] | None
    """The call for a resolver that takes Strawberry's ``Info``, on a source at a path."""
    sync: bool
    """An attribute read: never an awaitable."""
    attribute: str | None = None
    """The attribute an attribute read reads."""
    arguments: tuple[Argument, ...] = ()
    """Each argument of ``with_info``'s keyword arguments."""


@dataclass(frozen=True, slots=True)
class Argument:
    name: str
    """As GraphQL names it."""
    python_name: str
    convert: Callable[[Any], Any] | None
    """What Strawberry makes of graphql-core's coerced value; None for a
    plain scalar, which Strawberry passes on unconverted."""


def direct_resolver(schema: GraphQLSchema, site: Site) -> Direct | None:
    field_def = site[0]
    field = (field_def.extensions or {}).get(_DEFINITION)
    strawberry_schema = strawberry_schema_of(schema)
    if (
        not isinstance(field, StrawberryField)
        or strawberry_schema is None
        or strawberry_schema.exception_handlers
        or field.extensions
        or field.is_subscription
    ):
        return None
    arguments = _plain_arguments(field, strawberry_schema.config) if field_def.args else ()
    if arguments is None:
        return None
    resolver = field.base_resolver
    if resolver is None:
        if arguments or field.default_resolver is not getattr:
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
        return None if arguments else Direct(call, None, sync=False)
    info_class: type = strawberry_schema.config.info_class
    lazy_info = lazy_info_class(info_class)
    if lazy_info is None:
        return None
    name = info.name
    if _second_positional(resolver.wrapped_func) == name:

        def positional(
            executor: PlanExecutor, source: Any, path: Path, kwargs: dict[str, Any] = _NONE
        ) -> Any:
            return call(source, lazy_info(executor, site, path, field), **kwargs)

        return Direct(None, positional, sync=False, arguments=arguments)

    def by_name(
        executor: PlanExecutor, source: Any, path: Path, kwargs: dict[str, Any] = _NONE
    ) -> Any:
        return call(source, **{name: lazy_info(executor, site, path, field)}, **kwargs)

    return Direct(None, by_name, sync=False, arguments=arguments)


_NONE: dict[str, Any] = {}
_PLAIN = (int, str, bool, float, ID)
"""Argument types Strawberry passes on as graphql-core coerced them."""


def _plain_arguments(field: StrawberryField, config: Any) -> tuple[Argument, ...] | None:
    """The arguments when every one is a plain scalar or a leaf input, else None."""
    converted = []
    for argument in field.arguments:
        kind = argument.type
        if isinstance(kind, StrawberryOptional) and not isinstance(kind, StrawberryMaybe):
            kind = kind.of_type
        convert = None
        if not any(kind is plain for plain in _PLAIN):
            convert = _leaf_input(kind, config)
            if convert is None:
                return None
        name = config.name_converter.from_argument(argument)
        converted.append(Argument(name, argument.python_name, convert))
    return tuple(converted)


def _leaf_input(kind: Any, config: Any) -> Callable[[Any], Any] | None:
    """The conversion of a leaf input type (not in a list), else None."""
    definition = get_object_definition(kind) if isinstance(kind, type) else None
    if definition is None or not definition.is_input:
        return None
    builder = definition.from_input
    return builder.converter(config.name_converter) if isinstance(builder, LeafBuilder) else None


def _second_positional(function: Any) -> str | None:
    """The name of the parameter after ``self``, when it can be passed by position."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return None
    if len(parameters) < 2 or parameters[1].kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD:
        return None
    return parameters[1].name
