"""Leaf shortcuts give what the type's own output coercion gives."""

from __future__ import annotations

from enum import Enum

import pytest
from graphql import GraphQLBoolean, GraphQLEnumType, GraphQLID, GraphQLInt, GraphQLString

from api.graphql.execution.leaf_coercion import leaf_passthrough
from api.graphql.schema import build_schema

SCHEMA = build_schema()
ENUMS = [
    named
    for named in SCHEMA.graphql_schema.type_map.values()
    if isinstance(named, GraphQLEnumType) and getattr(named, "wrapped_cls", None) is not None
]


def test_the_schema_has_enums_to_check() -> None:
    assert len(ENUMS) >= 5


@pytest.mark.parametrize("enum_type", ENUMS, ids=lambda enum: enum.name)
def test_every_enum_member_gets_the_name_coercion_gives(enum_type: GraphQLEnumType) -> None:
    passthrough = leaf_passthrough(enum_type)
    wrapped: type[Enum] = enum_type.wrapped_cls  # type: ignore[attr-defined]
    assert set(passthrough) == {wrapped}
    for member in wrapped:
        assert passthrough[wrapped](member) == enum_type.coerce_output_value(member)


@pytest.mark.parametrize(
    ("leaf", "value"),
    [(GraphQLString, "text"), (GraphQLString, ""), (GraphQLID, "P-1"), (GraphQLBoolean, False)],
)
def test_scalars_pass_their_own_type_through(leaf: object, value: object) -> None:
    passthrough = leaf_passthrough(leaf)  # type: ignore[arg-type]
    assert passthrough[type(value)](value) == leaf.coerce_output_value(value)  # type: ignore[attr-defined]


def test_other_value_types_are_left_to_coercion() -> None:
    """An int for String is coerced ("1"), a bool for String too: no shortcut."""
    assert int not in leaf_passthrough(GraphQLString)
    assert bool not in leaf_passthrough(GraphQLString)
    assert leaf_passthrough(GraphQLInt) == {}
