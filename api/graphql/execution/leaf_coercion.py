"""Leaf values whose output coercion is known without calling it.

graphql-core's ``String`` returns a ``str`` as it is, ``Boolean`` a ``bool``,
and Strawberry's enum types look a member's name up by comparing values one
by one. For those value types the answer is decided per type at compile
time; any other value (an ``int`` for ``String``, a number out of ``Int``'s
range) still goes through the type's own ``coerce_output_value``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphql import (
    GraphQLBoolean,
    GraphQLEnumType,
    GraphQLID,
    GraphQLLeafType,
    GraphQLString,
)

__all__ = ["enum_names", "leaf_passthrough"]

Passthrough = dict[type, Callable[[Any], Any]]


def _same(value: Any) -> Any:
    return value


def leaf_passthrough(leaf: GraphQLLeafType) -> Passthrough:
    """Value type -> its output, for the value types whose output needs no check."""
    if leaf is GraphQLString or leaf is GraphQLID:
        return {str: _same}
    if leaf is GraphQLBoolean:
        return {bool: _same}
    if isinstance(leaf, GraphQLEnumType):
        names = enum_names(leaf)
        wrapped: type | None = getattr(leaf, "wrapped_cls", None)
        return {} if names is None or wrapped is None else {wrapped: names.__getitem__}
    return {}


def enum_names(enum: GraphQLEnumType) -> dict[Any, str] | None:
    """Strawberry's enum type answers the first name whose value equals the
    member's value; the table holds that name for every member (None: not
    every member has one, or the type wraps no Python enum)."""
    wrapped = getattr(enum, "wrapped_cls", None)
    if wrapped is None:
        return None
    names: dict[Any, str] = {}
    for member in wrapped:
        for name, value in enum.values.items():
            if member.value == value.value:
                names.setdefault(member, name)
                break
    if len(names) != len(wrapped):
        return None
    return names
