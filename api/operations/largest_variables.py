"""Variable values at their largest, so a registered operation's cost is
the most it can ever cost (docs/design.md, "Named operations").

Page sizes and list lengths are what cost grows with: every ``Int`` is the
largest page, every list holds the most items a mutation accepts, every
``Boolean`` is true (an ``@include`` taken). Other leaves only need a value
that coerces; optional non-numeric inputs stay unset.
"""

from __future__ import annotations

from typing import Any

from graphql import (
    GraphQLEnumType,
    GraphQLInputObjectType,
    GraphQLInputType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLScalarType,
    GraphQLSchema,
    OperationDefinitionNode,
    type_from_ast,
)

from domain.errors import ConfigurationError
from storage.limits import PAGE_SIZE_MAX

__all__ = ["LIST_ITEMS_MAX", "largest_variables"]

LIST_ITEMS_MAX = 100
"""The longest list argument any field takes (``registerProducts``)."""

_SCALARS: dict[str, Any] = {
    "Int": PAGE_SIZE_MAX,
    "Float": 0.0,
    "String": "0",
    "ID": "0",
    "Boolean": True,
    "Date": "2000-01-01",
    "DateTime": "2000-01-01T00:00:00Z",
    "Decimal": "0",
    "JSON": {},
}
_ABSENT = object()


def largest_variables(schema: GraphQLSchema, operation: OperationDefinitionNode) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for definition in operation.variable_definitions or ():
        type_ = type_from_ast(schema, definition.type)
        if type_ is None:
            continue
        value = _largest(type_, required=False)  # type: ignore[arg-type]
        if value is not _ABSENT:
            values[definition.variable.name.value] = value
    return values


def _largest(type_: GraphQLInputType, *, required: bool) -> Any:
    if isinstance(type_, GraphQLNonNull):
        return _largest(type_.of_type, required=True)
    if isinstance(type_, GraphQLList):
        item = _largest(type_.of_type, required=True)
        return [item] * LIST_ITEMS_MAX
    if isinstance(type_, GraphQLEnumType):
        return next(iter(type_.values)) if required else _ABSENT
    if isinstance(type_, GraphQLInputObjectType):
        if not required:
            return _ABSENT
        fields = {name: _largest(f.type, required=False) for name, f in type_.fields.items()}
        required_fields = {
            name: _largest(f.type, required=True)
            for name, f in type_.fields.items()
            if isinstance(f.type, GraphQLNonNull)
        }
        merged = {k: v for k, v in fields.items() if v is not _ABSENT} | required_fields
        return merged
    if isinstance(type_, GraphQLScalarType):
        if type_.name not in _SCALARS:
            raise ConfigurationError(f"no sample value for scalar {type_.name}")
        numeric = type_.name in ("Int", "Boolean")
        return _SCALARS[type_.name] if required or numeric else _ABSENT
    return _ABSENT
