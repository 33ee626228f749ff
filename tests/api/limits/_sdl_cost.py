"""The cost of an operation from ``schema.graphql`` alone: its ``@cost`` and
``@listSize`` directives read as docs/design.md, Cost directives says, with
nothing of the planner (``api/limits/cost.py``) imported."""

from __future__ import annotations

from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLField,
    GraphQLNamedType,
    GraphQLObjectType,
    GraphQLSchema,
    InlineFragmentNode,
    IntValueNode,
    SelectionSetNode,
    get_named_type,
    get_operation_ast,
    is_abstract_type,
    value_from_ast_untyped,
)


def _directive(node: Any, name: str) -> dict[str, Any] | None:
    for directive in getattr(node, "directives", None) or ():
        if directive.name.value == name:
            return {a.name.value: value_from_ast_untyped(a.value) for a in directive.arguments}
    return None


class SDLCost:
    def __init__(self, schema: GraphQLSchema, document: DocumentNode) -> None:
        self.schema = schema
        self.fragments = {
            d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
        }
        self.document = document

    def total(self) -> int:
        operation = get_operation_ast(self.document)
        assert operation is not None
        root = self.schema.get_root_type(operation.operation)
        assert root is not None
        return self.selections(root, [operation.selection_set])

    def selections(self, type_: GraphQLNamedType, sets: list[SelectionSetNode]) -> int:
        if is_abstract_type(type_):
            possible = self.schema.get_possible_types(type_)  # type: ignore[arg-type]
            return max((self.selections(t, sets) for t in possible), default=0)
        if not isinstance(type_, GraphQLObjectType):
            return 0
        fields: dict[str, list[FieldNode]] = {}
        self.collect(type_, sets, fields)
        return sum(self.field(type_.fields[n[0].name.value], n) for n in fields.values())

    def collect(
        self, type_: GraphQLObjectType, sets: list[SelectionSetNode], into: dict[str, Any]
    ) -> None:
        for selection_set in sets:
            for selection in selection_set.selections:
                if isinstance(selection, FieldNode):
                    if not selection.name.value.startswith("__"):
                        key = (selection.alias or selection.name).value
                        into.setdefault(key, []).append(selection)
                elif isinstance(selection, InlineFragmentNode | FragmentSpreadNode):
                    fragment = (
                        selection
                        if isinstance(selection, InlineFragmentNode)
                        else self.fragments[selection.name.value]
                    )
                    condition = fragment.type_condition
                    if condition is None or self.applies(condition.name.value, type_):
                        self.collect(type_, [fragment.selection_set], into)

    def applies(self, condition: str, type_: GraphQLObjectType) -> bool:
        conditional = self.schema.get_type(condition)
        if conditional is type_:
            return True
        return (
            conditional is not None
            and is_abstract_type(conditional)
            and (
                self.schema.is_sub_type(conditional, type_)  # type: ignore[arg-type]
            )
        )

    def field(self, definition: GraphQLField, nodes: list[FieldNode]) -> int:
        node = nodes[0]
        cost = _directive(definition.ast_node, "cost")
        weight = int(cost["weight"]) if cost else 0
        given = {a.name.value: a.value for a in node.arguments or ()}
        size = 1
        list_size = _directive(definition.ast_node, "listSize")
        if list_size is not None:
            size = list_size.get("assumedSize") or 1
            for name in list_size.get("slicingArguments") or ():
                value = given.get(name)
                default = definition.args[name].default_value
                if isinstance(value, IntValueNode):
                    size = int(value.value)
                elif value is None and isinstance(default, int):
                    size = default
            weight *= max(size, 1)
        for name, argument in definition.args.items():
            argument_cost = _directive(argument.ast_node, "cost")
            if argument_cost and name in given and value_from_ast_untyped(given[name]) is not None:
                weight += int(argument_cost["weight"])
        sets = [n.selection_set for n in nodes if n.selection_set is not None]
        below = self.selections(get_named_type(definition.type), sets) if sets else 0
        return weight + size * below
