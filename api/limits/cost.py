"""What an operation would read, computed before it runs.

The walk follows the operation (fragments, ``@skip``/``@include`` and
variables applied, fields merged by response key as execution merges them)
through the schema, pricing each field by the access pattern it declares
(``resolvers.fields``; the prices in ``api.limits.field_cost``):

- everything below a query field is counted once per item of its page, and
  below a list field without paging (``registerProducts``) once per element
  of the longest list argument;
- a subscription's root field counts once per event, so its cost is that
  of one event.

``first`` is checked on the way: past the pattern's maximum page it is
BAD_USER_INPUT before anything runs, rather than a storage error halfway.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import strawberry
from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLIncludeDirective,
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
from strawberry.types import ExecutionContext
from strawberry.types.graphql import OperationType as StrawberryOperationType

from api._strawberry import graphql_schema_of
from api.limits.cost_report import ActualCost, cost_extension, shows_reads
from api.limits.field_cost import (
    DAY_RANGES,
    FILTER_CHECKS,
    FieldReads,
    check_first,
    counts_arguments,
    days_covered,
    field_cost,
    field_reads,
    filter_check_cost,
)
from api.limits.refuse_operation import refuse
from domain.errors import ProofgateError, QueryTooComplex
from resolvers.fields import field_access_patterns

__all__ = [
    "MAX_FIELDS",
    "STATIC_COSTS",
    "CostBudget",
    "CostModel",
    "cost_model",
]

MAX_FIELDS = 10_000
"""Selected fields after fragments are expanded. Fragments spread inside
fragments multiply; past this the operation is refused whatever it reads."""

STATIC_COSTS = 1024
"""Operations remembered with their cost, the most recently used."""

_SMALLER = "Ask for smaller pages (first) or fewer nested connections, or split the operation."


_Known = tuple[weakref.ref[DocumentNode], int]


class _Unmeasurable(Exception):
    """Arguments that do not coerce: execution reports them, not the cost walk."""


class CostModel:
    """The field -> access pattern map of one schema, compiled once."""

    def __init__(self, schema: strawberry.Schema) -> None:
        self.schema: GraphQLSchema = graphql_schema_of(schema)
        self.reads: dict[tuple[str, str], FieldReads] = {}
        self._static: OrderedDict[tuple[int, str | None], _Known] = OrderedDict()
        for access in field_access_patterns(schema):
            reads = field_reads(access)
            if reads is not None:
                self.reads[(access.type_name, access.field_name)] = reads

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
        checked = FILTER_CHECKS.get((parent.name, name))
        arguments: dict[str, Any] = {}
        if per_day is not None or checked is not None or counts_arguments(definition, reads):
            self.dynamic = self.dynamic or any(_has_variable(a.value) for a in node.arguments or ())
            try:
                arguments = get_argument_values(definition, node, self.variables)
            except GraphQLError:
                raise _Unmeasurable from None
        check_first(parent.name, name, arguments, reads)
        own, per_item = field_cost(definition, arguments, reads, per_event=self.per_event and root)
        if per_day is not None:
            own += per_day * days_covered(arguments)
        if checked is not None:
            own += filter_check_cost(arguments.get(checked))
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


def _has_variable(value: ValueNode) -> bool:
    if isinstance(value, VariableNode):
        return True
    if isinstance(value, ListValueNode):
        return any(_has_variable(v) for v in value.values)
    if isinstance(value, ObjectValueNode):
        return any(_has_variable(f.value) for f in value.fields)
    return False


_models: weakref.WeakKeyDictionary[strawberry.Schema, CostModel] = weakref.WeakKeyDictionary()


def cost_model(schema: strawberry.Schema) -> CostModel:
    model = _models.get(schema)
    if model is None:
        model = _models[schema] = CostModel(schema)
    return model


class CostBudget(SchemaExtension):
    """Refuses an operation whose cost is over ``max_cost``, or whose ``first``
    is out of range, before it runs; reports the planned and the actual cost
    of every query and mutation in ``extensions.cost``
    (``api/limits/cost_report.py``). A subscription's events carry none: the
    fan-out encodes one message for many subscribers."""

    def __init__(self, *, max_cost: int) -> None:
        self.max_cost = max_cost
        self.cost: int | None = None
        self.actual: ActualCost | None = None

    def on_execute(self) -> Iterator[None]:
        execution_context = self.execution_context
        document = execution_context.graphql_document
        if execution_context.result is None and document is not None:
            self._measure(execution_context)
        if _is_subscription(execution_context):
            yield
            return
        with ActualCost() as self.actual:
            yield

    def _measure(self, execution_context: ExecutionContext) -> None:
        try:
            self.cost = cost_model(execution_context.schema).measure(
                execution_context.graphql_document,  # type: ignore[arg-type]
                execution_context.operation_name,
                execution_context.variables,
            )
        except ProofgateError as error:
            refuse(execution_context, error)
        else:
            if self.cost is not None and self.cost > self.max_cost:
                refuse(
                    execution_context,
                    QueryTooComplex(
                        f"The operation would cost {self.cost}, over the limit of {self.max_cost}",
                        hint=_SMALLER,
                        cost=self.cost,
                        maxCost=self.max_cost,
                    ),
                )

    def get_results(self) -> dict[str, Any]:
        if self.actual is None:
            return {}
        shown = shows_reads(self.execution_context.context)
        calls = self.actual.calls() if shown else None
        return {"cost": cost_extension(self.cost, self.max_cost, calls)}


def _is_subscription(execution_context: ExecutionContext) -> bool:
    try:
        return execution_context.operation_type is StrawberryOperationType.SUBSCRIPTION
    except Exception:
        return False  # no operation to run: it reads nothing, and says why
