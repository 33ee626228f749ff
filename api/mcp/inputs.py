"""A tool's input schema, derived from its operation's variables.

Types map to JSON Schema (``Int`` to integer, enums to their values, input
objects to objects with their required fields); a non-null variable without
a default is required; descriptions come from the schema: the argument a
variable is passed to, else the variable's type (docs/design.md, "MCP tools").
"""

from __future__ import annotations

from typing import Any

from graphql import (
    ArgumentNode,
    GraphQLEnumType,
    GraphQLInputObjectType,
    GraphQLInputType,
    GraphQLList,
    GraphQLNamedType,
    GraphQLNonNull,
    GraphQLScalarType,
    GraphQLSchema,
    OperationDefinitionNode,
    TypeInfo,
    TypeInfoVisitor,
    VariableNode,
    Visitor,
    is_specified_scalar_type,
    type_from_ast,
    value_from_ast,
    visit,
)
from graphql.pyutils import Undefined

__all__ = ["input_schema"]

MAX_NESTING = 8
"""Input objects may refer to themselves; deeper than this is left open."""

_SCALARS: dict[str, dict[str, Any]] = {
    "Int": {"type": "integer"},
    "Float": {"type": "number"},
    "String": {"type": "string"},
    "ID": {"type": "string"},
    "Boolean": {"type": "boolean"},
    "DateTime": {"type": "string", "format": "date-time"},
    "Date": {"type": "string", "format": "date"},
    "Decimal": {"type": "string", "pattern": r"^-?\d+(\.\d+)?$"},
    "JSON": {},
}


def input_schema(schema: GraphQLSchema, operation: OperationDefinitionNode) -> dict[str, Any]:
    descriptions = _argument_descriptions(schema, operation)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for definition in operation.variable_definitions or ():
        name = definition.variable.name.value
        type_ = type_from_ast(schema, definition.type)
        assert type_ is not None, "the registry validated the operation"
        prop = _schema_of(type_, 0)  # type: ignore[arg-type]
        if name in descriptions:
            prop["description"] = descriptions[name]
        if definition.default_value is not None:
            prop["default"] = value_from_ast(definition.default_value, type_)  # type: ignore[arg-type]
        elif isinstance(type_, GraphQLNonNull):
            required.append(name)
        properties[name] = prop
    result: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        result["required"] = required
    return result


def _schema_of(type_: GraphQLInputType, depth: int) -> dict[str, Any]:
    if isinstance(type_, GraphQLNonNull):
        return _schema_of(type_.of_type, depth)
    if isinstance(type_, GraphQLList):
        return {"type": "array", "items": _schema_of(type_.of_type, depth)}
    if isinstance(type_, GraphQLEnumType):
        return _described({"type": "string", "enum": list(type_.values)}, type_)
    if isinstance(type_, GraphQLInputObjectType):
        return _object(type_, depth)
    if isinstance(type_, GraphQLScalarType):
        return _described(dict(_SCALARS.get(type_.name, {})), type_)
    return {}


def _object(type_: GraphQLInputObjectType, depth: int) -> dict[str, Any]:
    if depth >= MAX_NESTING:
        return {"type": "object"}
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, field in type_.fields.items():
        prop = _schema_of(field.type, depth + 1)
        if field.description:
            prop["description"] = field.description
        properties[name] = prop
        if isinstance(field.type, GraphQLNonNull) and field.default_value is Undefined:
            required.append(name)
    result: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        result["required"] = required
    return _described(result, type_)


def _described(result: dict[str, Any], type_: GraphQLNamedType) -> dict[str, Any]:
    """Not GraphQL's own scalars: "The `String` scalar type represents textual
    data" tells an agent nothing the JSON type does not."""
    if type_.description and not is_specified_scalar_type(type_):
        result["description"] = type_.description
    return result


def _argument_descriptions(
    schema: GraphQLSchema, operation: OperationDefinitionNode
) -> dict[str, str]:
    """The description of the argument each variable is passed to directly."""
    found: dict[str, str] = {}
    type_info = TypeInfo(schema)

    class Arguments(Visitor):
        def enter_argument(self, node: ArgumentNode, *_: object) -> None:
            argument = type_info.get_argument()
            if isinstance(node.value, VariableNode) and argument and argument.description:
                found.setdefault(node.value.name.value, argument.description)

    visit(operation, TypeInfoVisitor(type_info, Arguments()))
    return found
