"""The IBM cost directives (``@cost``, ``@listSize``) in the SDL, made from the
prices the planner uses (``api/limits/field_cost.py``), so a tool that reads
only ``schema.graphql`` estimates at least what ``api/limits/cost.py`` plans
(docs/design.md, Cost directives).

How the directives add up, the reading ``tests/api/limits/test_cost_directives.py``
computes: a field costs its ``@cost`` weight, times its list size when it has
a ``@listSize``, plus the weights of the ``@cost`` arguments it is given, plus
its selection's cost once per element of its list size. The size is the
``first`` it is given, else ``first``'s default, else ``assumedSize``; a field
without ``@cost`` costs nothing of its own. Where the planner counts what the
SDL cannot say (``auditLog``'s days, a filter's scan, an analytics range, a
list argument's length) the directive holds the most it may be.
"""

from __future__ import annotations

from collections.abc import Iterator

import strawberry
from graphql import GraphQLField, GraphQLList, GraphQLNamedType, get_nullable_type
from strawberry.schema_directive import Location
from strawberry.types.unset import UNSET

from api._strawberry import graphql_schema_of
from api.limits.cost import cost_model
from api.limits.field_cost import DAY_RANGES, FieldReads
from domain.analytics import MAX_DAYS
from domain.validation import BATCH_MAX_ITEMS
from resolvers.audit.queries import AUDIT_DAYS_MAX
from resolvers.node.queries import NODES_MAX_IDS
from storage.registry import Operation

__all__ = ["Cost", "ListSize", "add_cost_directives"]

_BACKREF = "strawberry-definition"
_SLICING = "first"
LIST_ARGUMENT_MAX = {
    ("Query", "nodes"): NODES_MAX_IDS,
    ("Mutation", "registerProducts"): BATCH_MAX_ITEMS,
}
"""The longest list argument of a list field whose selection runs per element."""
FAN_OUT_MAX = {"days": AUDIT_DAYS_MAX}
"""The largest value of a fan-out argument (``api/limits/field_cost.py``, ``FAN_OUT``)."""


@strawberry.schema_directive(
    name="cost",
    locations=[
        Location.ARGUMENT_DEFINITION,
        Location.ENUM,
        Location.FIELD_DEFINITION,
        Location.INPUT_FIELD_DEFINITION,
        Location.OBJECT,
        Location.SCALAR,
    ],
    description="IBM GraphQL Cost Directives: the items one resolution reads.",
)
class Cost:
    weight: str


@strawberry.schema_directive(
    name="listSize",
    locations=[Location.FIELD_DEFINITION],
    description="IBM GraphQL Cost Directives: how many items a list field reads.",
)
class ListSize:
    assumed_size: int | None = UNSET
    slicing_arguments: list[str] | None = UNSET
    sized_fields: list[str] | None = UNSET
    require_one_slicing_argument: bool | None = True


def add_cost_directives(schema: strawberry.Schema) -> None:
    """Sets the directives on the schema's fields; the same prices give the
    same directives, so building another schema changes nothing."""
    graphql_schema = graphql_schema_of(schema)
    model = cost_model(schema)
    for type_name, field_name, field in _fields(graphql_schema.type_map):
        reads = model.reads.get((type_name, field_name))
        definition = field.extensions.get(_BACKREF)
        if definition is None:
            continue
        own = [d for d in definition.directives if not isinstance(d, Cost | ListSize)]
        definition.directives = own + _directives(type_name, field_name, field, reads)
        if reads is not None and reads.filtered is not None:
            argument = field.args[reads.filtered[0]].extensions.get(_BACKREF)
            if argument is not None:
                kept = [d for d in argument.directives if not isinstance(d, Cost)]
                argument.directives = [*kept, Cost(weight=str(reads.filtered[1]))]


def _fields(
    type_map: dict[str, GraphQLNamedType],
) -> Iterator[tuple[str, str, GraphQLField]]:
    for type_name, type_ in type_map.items():
        fields = getattr(type_, "fields", None)
        if type_name.startswith("__") or not isinstance(fields, dict):
            continue
        for field_name, field in fields.items():
            if isinstance(field, GraphQLField):
                yield type_name, field_name, field


def _directives(
    type_name: str, field_name: str, field: GraphQLField, reads: FieldReads | None
) -> list[object]:
    per_day = DAY_RANGES.get((type_name, field_name))
    if reads is None:
        return [] if per_day is None else [Cost(weight=str(per_day * MAX_DAYS))]
    loads = int(reads.loads is not None)
    if reads.to_the_end is not None:
        return [Cost(weight=str(reads.to_the_end + loads + reads.extra))]
    list_max = LIST_ARGUMENT_MAX.get((type_name, field_name))
    per_event = type_name == "Subscription"
    if reads.pattern.operation is not Operation.QUERY or per_event:
        weight = Cost(weight=str(1 + loads + reads.extra))
        if list_max is None or not isinstance(get_nullable_type(field.type), GraphQLList):
            return [weight]
        # Its selection runs per element of the list argument, at most ``list_max``.
        return [weight, ListSize(assumed_size=list_max, require_one_slicing_argument=False)]
    fan_out = FAN_OUT_MAX[reads.fan_out] if reads.fan_out else 1
    weight = Cost(weight=str((1 + loads) * fan_out))
    connection = "edges" in getattr(get_nullable_type(field.type), "fields", {})
    sized = ["edges"] if connection else []
    if _SLICING in field.args:
        size = ListSize(
            assumed_size=reads.pattern.default_page,
            slicing_arguments=[_SLICING],
            sized_fields=sized or UNSET,
            require_one_slicing_argument=False,
        )
    else:
        size = ListSize(assumed_size=reads.pattern.max_page, sized_fields=sized or UNSET)
    return [weight, size]
