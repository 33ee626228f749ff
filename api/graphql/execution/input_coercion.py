"""graphql-core's ``coerce_input_value`` for one input type, worked out once.

For every value graphql-core walks the type again: is it non-null, a list,
an input object, a leaf, per field and per item (for ``verifyProduct``'s
``ScanInput`` ~25 us of its ~35 us of variable coercion). The type is fixed
by the operation, so ``input_coercer`` builds a function per type that makes
the same decisions in the same order: null for a nullable type and Undefined
for a non-null one, a lone value as a list of one, an input object's unknown
field, missing required field or memoized default, its ``out_type``, and a
leaf's own ``coerce_input_value`` with any exception taken as Undefined. A
oneOf input object or a type that refers to itself is left to graphql-core
(None). ``nests_boundedly`` tells whether a value of the type can nest
deeper than graphql-core's ``MAX_NESTING_DEPTH`` at all, so the caller can
spare the depth walk. ``tests/api/graphql/execution/test_execution_variables.py``
holds the results to graphql-core's for generated values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphql import (
    GraphQLInputObjectType,
    GraphQLInputType,
    GraphQLList,
    GraphQLNonNull,
    is_required_input_field,
)
from graphql.language.parser import MAX_NESTING_DEPTH
from graphql.pyutils import Undefined, is_iterable
from graphql.utilities.coerce_input_value import coerce_default_value

__all__ = ["Coerce", "input_coercer", "nests_boundedly"]

Coerce = Callable[[Any], Any]


def input_coercer(kind: GraphQLInputType, within: frozenset[str] = frozenset()) -> Coerce | None:
    if isinstance(kind, GraphQLNonNull):
        inner = input_coercer(kind.of_type, within)
        if inner is None:
            return None

        def non_null(value: Any) -> Any:
            if value is None or value is Undefined:
                return Undefined
            return inner(value)

        return non_null
    nullable = _nullable_coercer(kind, within)
    if nullable is None:
        return None

    def or_null(value: Any) -> Any:
        if value is None or value is Undefined:
            return None
        return nullable(value)

    return or_null


def _nullable_coercer(kind: GraphQLInputType, within: frozenset[str]) -> Coerce | None:
    if isinstance(kind, GraphQLList):
        item = input_coercer(kind.of_type, within)
        return None if item is None else _list_coercer(item)
    if isinstance(kind, GraphQLInputObjectType):
        if kind.is_one_of or kind.name in within:
            return None
        return _object_coercer(kind, within | {kind.name})
    return _leaf_coercer(kind.coerce_input_value)  # type: ignore[union-attr]


def _list_coercer(item: Coerce) -> Coerce:
    def coerce_list(value: Any) -> Any:
        if not is_iterable(value):  # a lone value is a list of one
            coerced = item(value)
            return Undefined if coerced is Undefined else [coerced]
        items = []
        for each in value:
            coerced = item(each)
            if coerced is Undefined:
                return Undefined
            items.append(coerced)
        return items

    return coerce_list


def _object_coercer(kind: GraphQLInputObjectType, within: frozenset[str]) -> Coerce | None:
    fields = kind.fields
    plan = []
    for name, field in fields.items():
        coerce = input_coercer(field.type, within)
        if coerce is None:
            return None
        required = is_required_input_field(field)
        default = Undefined if required else coerce_default_value(field)
        plan.append((name, field.out_name or name, coerce, required, default))
    out_type = kind.out_type

    def coerce_object(value: Any) -> Any:
        if not isinstance(value, dict):
            return Undefined
        for name, given in value.items():
            if given is not Undefined and name not in fields:
                return Undefined
        coerced: dict[str, Any] = {}
        for name, out_name, coerce, required, default in plan:
            given = value.get(name, Undefined)
            if given is Undefined:
                if required:
                    return Undefined
                if default is not Undefined:
                    coerced[out_name] = default
                continue
            result = coerce(given)
            if result is Undefined:
                return Undefined
            coerced[out_name] = result
        return out_type(coerced)

    return coerce_object


def _leaf_coercer(coerce_leaf: Coerce) -> Coerce:
    def coerce(value: Any) -> Any:
        try:
            return coerce_leaf(value)
        except Exception:  # as graphql-core: an invalid value, no value
            return Undefined

    return coerce


def nests_boundedly(kind: GraphQLInputType) -> bool:
    """Whether no value of ``kind`` can pass graphql-core's nesting check's
    depth: no list, no input object that refers to itself, few levels."""
    depth = _depth(kind, frozenset())
    return depth is not None and depth <= MAX_NESTING_DEPTH


def _depth(kind: GraphQLInputType, within: frozenset[str]) -> int | None:
    if isinstance(kind, GraphQLNonNull):
        kind = kind.of_type
    if isinstance(kind, GraphQLList):
        return None
    if isinstance(kind, GraphQLInputObjectType):
        if kind.name in within:
            return None
        deepest = 0
        for field in kind.fields.values():
            depth = _depth(field.type, within | {kind.name})
            if depth is None:
                return None
            deepest = max(deepest, depth)
        return deepest + 1
    return 0
