"""Every field that reads storage declares its one access pattern.

The walk runs over the real schema, and over a deliberately broken one to
prove it catches what it claims to."""

from __future__ import annotations

import strawberry
from graphql import GraphQLInterfaceType

from api.graphql.schema import schema
from resolvers.fields import (
    FieldAccess,
    ap_field,
    computed_field,
    field_access_patterns,
    mutation_field,
)
from storage import REGISTRY
from storage.access_patterns import BRAND_BY_ID, PRODUCT_BY_ID
from storage.keys import KeyTemplate
from storage.registry import AccessPattern, Operation, SortCondition
from storage.table import IndexName

REGISTERED = {pattern.id for pattern in REGISTRY}


def violations(accesses: list[FieldAccess]) -> list[str]:
    found = []
    for access in accesses:
        name = f"{access.type_name}.{access.field_name}"
        if access.has_resolver and access.access_pattern is None and not access.by_type:
            found.append(
                f"{name}: resolver without an access pattern (use ap_field or computed_field)"
            )
        for declared in (access.access_pattern, access.loads, *dict(access.by_type).values()):
            if declared is not None and declared not in REGISTERED:
                found.append(f"{name}: {declared} is not a registered access pattern")
        if access.type_name == "Mutation" and not access.writes:
            found.append(f"{name}: mutation not declared with mutation_field")
    return found


def test_every_field_declares_a_registered_access_pattern() -> None:
    assert violations(list(field_access_patterns(schema))) == []


def test_the_map_names_the_reads_it_should() -> None:
    declared = {
        (a.type_name, a.field_name): (a.access_pattern, a.loads)
        for a in field_access_patterns(schema)
    }
    assert declared[("Query", "brand")] == ("AP01", None)
    assert declared[("Query", "brands")] == ("AP02", "AP01")
    assert declared[("Query", "productByCode")] == ("AP05", "AP04")
    assert declared[("Query", "explore")] == ("AP08", "AP04")
    assert declared[("Query", "auditLog")] == ("AP14", None)
    assert declared[("Brand", "stats")] == ("AP03", None)
    assert declared[("Brand", "products")] == ("AP07", None)
    assert declared[("Product", "brand")] == ("AP01", None)
    assert declared[("Product", "certificate")] == (None, None)


def test_node_and_nodes_read_each_node_type_by_its_own_get_pattern() -> None:
    """One AP per type a global id may name: a get whose entity is that type,
    for every type implementing Node, and for nothing else."""
    node = schema.graphql_schema.get_type("Node")
    assert isinstance(node, GraphQLInterfaceType)
    implementers = {t.name for t in schema.graphql_schema.get_possible_types(node)}
    assert {"Brand", "Product", "ThreatAlert", "LedgerTransaction", "Webhook"} <= implementers
    by_field = {a.field_name: dict(a.by_type) for a in field_access_patterns(schema) if a.by_type}
    assert set(by_field) == {"node", "nodes"}
    for dispatch in by_field.values():
        assert set(dispatch) == implementers
        for type_name, ap_id in dispatch.items():
            pattern = REGISTRY[ap_id]
            assert (pattern.operation, pattern.entity) == (Operation.GET, type_name)


def test_the_walk_catches_undeclared_and_unregistered_fields() -> None:
    stray = AccessPattern(
        "AP99",
        "not registered",
        Operation.GET,
        IndexName.TABLE,
        KeyTemplate("X#{x}"),
        SortCondition("=", "Y"),
        "X",
    )

    @strawberry.type
    class Broken:
        @strawberry.field
        def undeclared(self) -> int:
            return 1

        @ap_field(stray)
        def unregistered(self) -> int:
            return 1

        @ap_field(BRAND_BY_ID, loads=stray)
        def unregistered_load(self) -> int:
            return 1

        @ap_field(PRODUCT_BY_ID)
        def fine(self) -> int:
            return 1

        @computed_field
        def computed(self) -> int:
            return 1

    @strawberry.type
    class Mutation:
        @strawberry.mutation
        def plain(self) -> int:
            return 1

        @mutation_field
        def declared(self) -> int:
            return 1

    broken = strawberry.Schema(query=Broken, mutation=Mutation)
    assert violations(list(field_access_patterns(broken))) == [
        "Broken.undeclared: resolver without an access pattern (use ap_field or computed_field)",
        "Broken.unregistered: AP99 is not a registered access pattern",
        "Broken.unregisteredLoad: AP99 is not a registered access pattern",
        "Mutation.plain: resolver without an access pattern (use ap_field or computed_field)",
        "Mutation.plain: mutation not declared with mutation_field",
    ]
