"""What an operation would read, computed before it runs.

The walk follows the operation (fragments, ``@skip``/``@include`` and
variables applied, fields merged by response key as execution merges them)
through the schema, reading the access pattern each field declares
(``resolvers.fields``):

- a get pattern costs 1, and so does the entity a field ``loads`` through it;
- a query pattern costs its page size: ``first``, else the pattern's default
  page (20), or its maximum page when the field takes no ``first``; a field
  that ``loads`` one entity per entry costs the page again;
- everything below a query field is counted once per item of its page, and
  below a list field without paging (``registerProducts``) once per element
  of the longest list argument;
- a field that reads a list to its end (a product's whole chain, for a
  verification or the passport) costs the longest that list can be, and a
  filter no key condition can express (``threats(minSeverity:)``) the most
  items it may examine (docs/design.md, Limits and cost);
- a subscription's root field counts once per event, so its cost is that
  of one event.

``first`` is checked on the way: past the pattern's maximum page it is
BAD_USER_INPUT before anything runs, rather than a storage error halfway.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

import strawberry
from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLField,
    GraphQLIncludeDirective,
    GraphQLList,
    GraphQLNamedType,
    GraphQLObjectType,
    GraphQLSchema,
    GraphQLSkipDirective,
    InlineFragmentNode,
    ListValueNode,
    ObjectValueNode,
    OperationType,
    SelectionNode,
    SelectionSetNode,
    ValueNode,
    VariableNode,
    get_named_type,
    get_nullable_type,
    get_operation_ast,
    is_abstract_type,
)
from graphql.execution.values import (
    VariableValues,
    get_argument_values,
    get_directive_values,
    get_variable_values,
)
from strawberry.extensions import SchemaExtension

from api.limits.refuse_operation import refuse
from domain.analytics import BRAND_SHARDS, MAX_DAYS
from domain.errors import BadUserInput, ProofgateError, QueryTooComplex
from resolvers.fields import field_access_patterns
from resolvers.threats.paging import SCAN_MAX_ITEMS
from services.provenance.walk import CHAIN_READ_ITEMS
from storage.access_patterns import REGISTRY
from storage.limits import PAGE_SIZE_MAX
from storage.registry import AccessPattern, Operation

__all__ = [
    "EXTRA_READS",
    "FAN_OUT",
    "FILTERED",
    "MAX_FIELDS",
    "READS_TO_THE_END",
    "STATIC_COSTS",
    "CostBudget",
    "CostModel",
    "cost_model",
]

FAN_OUT: Mapping[tuple[str, str], str] = {("Query", "auditLog"): "days"}
"""Fields that run their query once per unit of an argument: ``auditLog``
reads one partition per day (a scatter-gather)."""

_CLAIM_AND_CHAIN = 1 + CHAIN_READ_ITEMS
EXTRA_READS: Mapping[tuple[str, str], int] = {
    ("Mutation", "verifyProduct"): 1 + _CLAIM_AND_CHAIN,
    ("Query", "verification"): _CLAIM_AND_CHAIN,
}
"""Reads a field makes beyond the access pattern it declares (and the entity it
declares it loads): checking a product reads the product (AP04, declared by
``verification`` as what it loads), its claim (AP11) and its whole chain
(AP09, page after page, at most ``CHAIN_READ_ITEMS`` events: docs/design.md,
Limits and cost)."""
READS_TO_THE_END: Mapping[tuple[str, str], int] = {("Product", "passport"): CHAIN_READ_ITEMS}
"""Fields that read their query pattern to its end rather than one page, with
the most items that end can be: the passport lists the whole chain."""
FILTERED: Mapping[tuple[str, str], tuple[str, int]] = {
    ("Brand", "threats"): ("minSeverity", SCAN_MAX_ITEMS)
}
"""Fields that, given a filter no key condition can express, read past their
page for matches, up to a bound: ``threats(minSeverity:)`` examines up to
``SCAN_MAX_ITEMS`` alerts to fill its page."""
DAY_RANGES: Mapping[tuple[str, str], int] = {
    ("Brand", "analytics"): BRAND_SHARDS,
    ("Product", "analytics"): 1,
}
"""Fields that read items per day of their ``from``..``to`` range: a brand's
analytics read every shard of every day (one batch its fields share), so an
alias costs days x shards, not 1 (docs/design.md, Analytics)."""
MAX_FIELDS = 10_000
"""Selected fields after fragments are expanded. Fragments spread inside
fragments multiply; past this the operation is refused whatever it reads."""

STATIC_COSTS = 1024
"""Operations remembered with their cost, the most recently used."""

_SMALLER = "Ask for smaller pages (first) or fewer nested connections, or split the operation."


@dataclass(frozen=True, slots=True)
class _Reads:
    pattern: AccessPattern
    loads: AccessPattern | None
    fan_out: str | None
    extra: int = 0
    to_the_end: int | None = None
    """The most items a field that reads its pattern to the end can read."""
    filtered: tuple[str, int] | None = None
    """The filter argument that makes the field read past its page, and how far."""
    per_element: bool = False
    """A list field whose get runs once per element of its list argument."""


_Known = tuple[weakref.ref[DocumentNode], int]


class _Unmeasurable(Exception):
    """Arguments that do not coerce: execution reports them, not the cost walk."""


class CostModel:
    """The field -> access pattern map of one schema, compiled once."""

    def __init__(self, schema: strawberry.Schema) -> None:
        self.schema: GraphQLSchema = schema._schema
        self.reads: dict[tuple[str, str], _Reads] = {}
        self._static: OrderedDict[tuple[int, str | None], _Known] = OrderedDict()
        for access in field_access_patterns(schema):
            # node(id:): each type's pattern is a get, costing 1 whichever the id names.
            pattern = access.access_pattern or next(iter(dict(access.by_type).values()), None)
            if pattern is None:
                continue
            key = (access.type_name, access.field_name)
            loads = REGISTRY[access.loads] if access.loads else None
            self.reads[key] = _Reads(
                REGISTRY[pattern],
                loads,
                FAN_OUT.get(key),
                EXTRA_READS.get(key, 0),
                READS_TO_THE_END.get(key),
                FILTERED.get(key),
                per_element=bool(access.by_type),
            )

    def measure(
        self,
        document: DocumentNode,
        operation_name: str | None,
        variables: Mapping[str, Any] | None,
    ) -> int | None:
        """The operation's cost, or None when it cannot run anyway (no such
        operation, variables that do not coerce), so execution says why.

        The cost of an operation whose variables change nothing it counts
        (``verifyProduct(code: $code)``) is remembered for its document, which
        the parse cache keeps as one object per query text.
        """
        key = (id(document), operation_name)
        known = self._static.get(key)
        if known is not None and known[0]() is document:
            self._static.move_to_end(key)
            return known[1]
        operation = get_operation_ast(document, operation_name)
        if operation is None:
            return None
        root = self.schema.get_root_type(operation.operation)
        coerced = get_variable_values(
            self.schema, operation.variable_definitions or (), dict(variables or {})
        )
        if root is None or isinstance(coerced, list):
            return None
        fragments = {
            d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
        }
        walk = _Walk(
            self, fragments, coerced, per_event=operation.operation is OperationType.SUBSCRIPTION
        )
        try:
            cost = walk.selections(root, [operation.selection_set], 1, root=True)
        except _Unmeasurable:
            return None
        if not walk.dynamic:
            self._static[key] = (weakref.ref(document), cost)
            if len(self._static) > STATIC_COSTS:
                self._static.popitem(last=False)
        return cost


class _Walk:
    def __init__(
        self,
        model: CostModel,
        fragments: Mapping[str, FragmentDefinitionNode],
        variables: VariableValues,
        *,
        per_event: bool,
    ) -> None:
        self.model = model
        self.fragments = fragments
        self.variables = variables
        self.per_event = per_event
        self.fields = 0
        self.dynamic = False
        """Whether a variable changed what was counted."""

    def selections(
        self,
        type_: GraphQLNamedType,
        selection_sets: list[SelectionSetNode],
        multiplier: int,
        *,
        root: bool = False,
    ) -> int:
        if is_abstract_type(type_):
            possible = self.model.schema.get_possible_types(type_)
            return max(
                (self.selections(t, selection_sets, multiplier) for t in possible), default=0
            )
        if not isinstance(type_, GraphQLObjectType):
            return 0
        return sum(
            self.field(type_, nodes, multiplier, root=root)
            for nodes in self.collect(type_, selection_sets).values()
        )

    def field(
        self, parent: GraphQLObjectType, nodes: list[FieldNode], multiplier: int, *, root: bool
    ) -> int:
        node = nodes[0]
        name = node.name.value
        if name.startswith("__"):
            return 0
        self.fields += 1
        if self.fields > MAX_FIELDS:
            raise QueryTooComplex(
                f"The operation selects more than {MAX_FIELDS} fields",
                hint=_SMALLER,
                maxFields=MAX_FIELDS,
            )
        definition = parent.fields[name]
        reads = self.model.reads.get((parent.name, name))
        per_day = DAY_RANGES.get((parent.name, name))
        arguments: dict[str, Any] = {}
        if per_day is not None or _counts_arguments(definition, reads):
            self.dynamic = self.dynamic or any(_has_variable(a.value) for a in node.arguments or ())
            try:
                arguments = get_argument_values(definition, node, self.variables)
            except GraphQLError:
                raise _Unmeasurable from None
        _check_first(parent.name, name, arguments, reads)
        own, per_item = _cost(definition, arguments, reads, per_event=self.per_event and root)
        if per_day is not None:
            own += per_day * _days(arguments)
        selection_sets = [n.selection_set for n in nodes if n.selection_set is not None]
        below = 0
        if selection_sets:
            below = self.selections(
                get_named_type(definition.type), selection_sets, multiplier * per_item
            )
        return multiplier * own + below

    def collect(
        self, type_: GraphQLObjectType, selection_sets: Iterable[SelectionSetNode]
    ) -> dict[str, list[FieldNode]]:
        """Fields by response key, as execution groups them: one field spelled
        in two fragments is read once."""
        fields: dict[str, list[FieldNode]] = {}
        visited: set[str] = set()

        def visit(selection_set: SelectionSetNode) -> None:
            for selection in selection_set.selections:
                if not self.included(selection):
                    continue
                if isinstance(selection, FieldNode):
                    key = (selection.alias or selection.name).value
                    fields.setdefault(key, []).append(selection)
                elif isinstance(selection, InlineFragmentNode):
                    condition = selection.type_condition
                    if condition is None or self.applies(condition.name.value, type_):
                        visit(selection.selection_set)
                elif isinstance(selection, FragmentSpreadNode):
                    fragment = self.fragments.get(selection.name.value)
                    if fragment is None or fragment.name.value in visited:
                        continue
                    visited.add(fragment.name.value)
                    if self.applies(fragment.type_condition.name.value, type_):
                        visit(fragment.selection_set)

        for selection_set in selection_sets:
            visit(selection_set)
        return fields

    def included(self, node: SelectionNode) -> bool:
        if not node.directives:
            return True
        self.dynamic = self.dynamic or any(
            _has_variable(a.value) for d in node.directives for a in d.arguments or ()
        )
        skip = get_directive_values(GraphQLSkipDirective, node, self.variables)
        if skip is not None and skip.get("if") is True:
            return False
        include = get_directive_values(GraphQLIncludeDirective, node, self.variables)
        return include is None or include.get("if") is not False

    def applies(self, condition: str, type_: GraphQLObjectType) -> bool:
        conditional = self.model.schema.get_type(condition)
        if conditional is type_:
            return True
        if conditional is not None and is_abstract_type(conditional):
            return self.model.schema.is_sub_type(conditional, type_)
        return False


def _counts_arguments(definition: GraphQLField, reads: _Reads | None) -> bool:
    """Whether the field's arguments change its cost: a page size, a fan-out
    or, for a list without paging, the lists it is given."""
    return (
        "first" in definition.args
        or (reads is not None and reads.fan_out is not None)
        or isinstance(get_nullable_type(definition.type), GraphQLList)
    )


def _has_variable(value: ValueNode) -> bool:
    if isinstance(value, VariableNode):
        return True
    if isinstance(value, ListValueNode):
        return any(_has_variable(v) for v in value.values)
    if isinstance(value, ObjectValueNode):
        return any(_has_variable(f.value) for f in value.fields)
    return False


def _check_first(
    type_name: str, field_name: str, arguments: Mapping[str, Any], reads: _Reads | None
) -> None:
    first = arguments.get("first")
    if first is None:
        return
    maximum = PAGE_SIZE_MAX
    if reads is not None and reads.pattern.operation is Operation.QUERY:
        maximum = reads.pattern.max_page
    if not 0 <= first <= maximum:
        raise BadUserInput(
            f"first on {type_name}.{field_name} must be between 0 and {maximum}, got {first}",
            hint="Page through with after: pageInfo.endCursor.",
        )


def _cost(
    definition: GraphQLField, arguments: Mapping[str, Any], reads: _Reads | None, *, per_event: bool
) -> tuple[int, int]:
    """What one resolution of the field reads, and how many times the fields
    below it resolve."""
    if reads is None:
        return 0, _list_length(definition, arguments)
    pattern = reads.pattern
    if reads.to_the_end is not None:
        return reads.to_the_end + (reads.loads is not None) + reads.extra, 1
    if pattern.operation is not Operation.QUERY or per_event:
        reads_once = 1 + (reads.loads is not None) + reads.extra
        length = _list_length(definition, arguments)
        # A list of gets (nodes(ids:)) reads once per element.
        return reads_once * (length if reads.per_element else 1), length
    if "first" in definition.args:
        first = arguments.get("first")
        page = pattern.default_page if first is None else first
    else:
        page = pattern.max_page
    fan_out = arguments.get(reads.fan_out, 1) if reads.fan_out else 1
    entries = max(page, 1) * max(fan_out, 1)
    if reads.filtered is not None and arguments.get(reads.filtered[0]) is not None:
        entries = max(entries, reads.filtered[1])
    return entries + (page if reads.loads is not None else 0), page


def _days(arguments: Mapping[str, Any]) -> int:
    """The days a ``from``..``to`` range covers, within what ``days_in`` allows
    (a range it refuses fails at execution, before any read)."""
    dates = sorted(value for value in arguments.values() if isinstance(value, date))
    if len(dates) != 2:
        return MAX_DAYS
    return min(max((dates[1] - dates[0]).days + 1, 1), MAX_DAYS)


def _list_length(definition: GraphQLField, arguments: Mapping[str, Any]) -> int:
    if not isinstance(get_nullable_type(definition.type), GraphQLList):
        return 1
    lengths = [len(value) for value in arguments.values() if isinstance(value, list)]
    return max(lengths, default=1)


_models: weakref.WeakKeyDictionary[strawberry.Schema, CostModel] = weakref.WeakKeyDictionary()


def cost_model(schema: strawberry.Schema) -> CostModel:
    model = _models.get(schema)
    if model is None:
        model = _models[schema] = CostModel(schema)
    return model


class CostBudget(SchemaExtension):
    """Refuses an operation whose cost is over ``max_cost``, or whose ``first``
    is out of range, before it runs. With ``X-Proofgate-Trace: 1`` the cost of
    an operation that ran is reported next to the trace."""

    def __init__(self, *, max_cost: int) -> None:
        self.max_cost = max_cost
        self.cost: int | None = None

    def on_execute(self) -> None:  # type: ignore[override]
        execution_context = self.execution_context
        document = execution_context.graphql_document
        if execution_context.result is None and document is not None:
            try:
                self.cost = cost_model(execution_context.schema).measure(
                    document, execution_context.operation_name, execution_context.variables
                )
            except ProofgateError as error:
                refuse(execution_context, error)
            else:
                if self.cost is not None and self.cost > self.max_cost:
                    refuse(
                        execution_context,
                        QueryTooComplex(
                            f"The operation would cost {self.cost}, "
                            f"over the limit of {self.max_cost}",
                            hint=_SMALLER,
                            cost=self.cost,
                            maxCost=self.max_cost,
                        ),
                    )

    def get_results(self) -> dict[str, Any]:
        if self.cost is None or getattr(self.execution_context.context, "trace", None) is None:
            return {}
        return {"cost": self.cost, "maxCost": self.max_cost}
