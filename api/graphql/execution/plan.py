"""Compile a validated operation into nested closures, once per document.

graphql-core decides at every field of every item what to do: look the field
up, collect its subfields, walk the return type, build the resolve info, check
for awaitables. All of that is fixed by the document, the schema and the
``@skip``/``@include`` variables, so a plan decides it once and a request only
calls resolvers and completes values. Whatever a plan does not cover raises
``Unsupported`` while compiling, and that operation runs on graphql-core.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphql import (
    FieldNode,
    GraphQLBoolean,
    GraphQLEnumType,
    GraphQLError,
    GraphQLField,
    GraphQLID,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLString,
    OperationType,
    TypeNameMetaFieldDef,
    VariableNode,
    is_leaf_type,
    is_object_type,
    visit,
)
from graphql.execution.collect_fields import collect_fields, collect_subfields
from graphql.execution.values import get_argument_values
from graphql.language import Visitor
from graphql.pyutils import Path
from strawberry.execution.is_awaitable import optimized_is_awaitable as is_awaitable
from strawberry.schema.schema_converter import GraphQLCoreConverter
from strawberry.types.base import StrawberryObjectDefinition

from api.graphql.execution.budget import key_bytes, leaf_bytes
from api.graphql.execution.complete import (
    PLAIN,
    SETTLED,
    Completer,
    awaitable,
    complete_leaf,
    complete_list,
    complete_non_null,
    complete_object,
    complete_text,
    new_tuple,
    null_message,
)
from api.graphql.execution.fused import (
    Failed,
    FieldRunner,
    FusedField,
    InlineLeaf,
    SelectionRunner,
    Settle,
    closure_selection,
    fused_selection,
    inlinable,
)
from api.graphql.execution.leaf_coercion import enum_names
from api.graphql.execution.projection import projected_edges
from api.graphql.execution.protocols import PlanExecutor
from api.graphql.execution.resolve import Argument, Direct, direct_resolver
from resolvers.fields import AP_METADATA, LOADS_METADATA, NODE_METADATA

if TYPE_CHECKING:
    from graphql.execution.collect_fields import FieldDetailsList, GroupedFieldSet


__all__ = ["OperationPlan", "Unsupported", "compile_operation"]


class Unsupported(Exception):
    """A document feature left to graphql-core; its first argument, a fixed
    name, is the cause its fallbacks are counted by."""

    @property
    def cause(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True, slots=True)
class OperationPlan:
    run: Callable[[PlanExecutor, Any], Any]
    """Runs the root selection set on a root value: a dict, or an awaitable of one."""
    fields: int
    """How many field plans it holds, the measure of its size."""
    single_loads: frozenset[str] = frozenset()
    """Access patterns that one field at most declares it loads, outside
    any list: no other load of theirs can share its batch (``Loaders.single``)."""


def compile_operation(
    executor: PlanExecutor, *, fused: bool = True, projection: bool = True
) -> OperationPlan:
    """A subscription's plan runs its selection set on one event: Strawberry
    resolves the root field to the event itself. ``fused``, ``projection``:
    whether the plan takes those lanes; without them its selections are
    closures and its pages the general path's
    (docs/design.md, Fast paths and their switches)."""
    compiler = _Compiler(executor, fused=fused, projection=projection)
    operation = executor.operation
    if operation.directives:
        raise Unsupported("operation directives")
    if incremental([operation, *executor.fragment_definitions.values()]):
        raise Unsupported("@defer or @stream")  # graphql-core delivers the increments
    root_type = executor.schema.get_root_type(operation.operation)
    if root_type is None:
        raise Unsupported("no root type")
    grouped = collect_fields(
        executor.schema,
        executor.fragments,
        executor.variable_values,
        root_type,
        operation,
        executor.hide_suggestions,
    ).grouped_field_set
    fields = compiler.fields(root_type, grouped)
    serial = operation.operation is OperationType.MUTATION
    selection = _serial_runner(fields) if serial else compiler.selection(fields)
    return OperationPlan(
        run=lambda ex, root: selection(ex, root, None),
        fields=compiler.count,
        # Only a mutation's: a query's sibling fields resolve concurrently, and
        # reads issued at once rather than batched on the next turn would
        # settle, and list their errors, in another order than graphql-core's.
        single_loads=compiler.single_loads() if serial else frozenset(),
    )


def condition_variables(definitions: list[Any]) -> tuple[str, ...]:
    """Names of the variables ``@skip``/``@include`` read: a plan collects
    fields for one set of their values."""
    names: list[str] = []

    class _Conditions(Visitor):
        def enter_directive(self, node: Any, *_: Any) -> None:
            if node.name.value in ("skip", "include"):
                for argument in node.arguments or ():
                    if isinstance(argument.value, VariableNode):
                        names.append(argument.value.name.value)

    for definition in definitions:
        visit(definition, _Conditions())
    return tuple(dict.fromkeys(names))


def incremental(definitions: Iterable[Any]) -> bool:
    """Whether any of ``definitions`` asks for incremental delivery."""

    class _Incremental(Visitor):
        found = False

        def enter_directive(self, node: Any, *_: Any) -> None:
            if node.name.value in ("defer", "stream"):
                self.found = True

    visitor = _Incremental()
    for definition in definitions:
        visit(definition, visitor)
    return visitor.found


class _Compiler:
    def __init__(self, executor: PlanExecutor, *, fused: bool, projection: bool) -> None:
        self.fused = fused
        self.projection = projection
        self.executor = executor
        self.schema = executor.schema
        self.count = 0
        self.loads: Counter[str] = Counter()
        """How many fields of the operation declare each access pattern."""
        self.listed: set[str] = set()
        """Access patterns a field under a list declares."""
        self.lists = 0
        """How many lists enclose the field being compiled."""

    def note_loads(self, field_def: GraphQLField) -> None:
        """A field returning a list may load many keys itself (``nodes``)."""
        field = (field_def.extensions or {}).get(GraphQLCoreConverter.DEFINITION_BACKREF)
        metadata = getattr(field, "metadata", None) or {}
        declared = [metadata.get(AP_METADATA), metadata.get(LOADS_METADATA)]
        declared += [ap for _, ap in metadata.get(NODE_METADATA, ())]
        return_type = field_def.type
        if isinstance(return_type, GraphQLNonNull):
            return_type = return_type.of_type
        listed = self.lists > 0 or isinstance(return_type, GraphQLList)
        for ap in declared:
            if ap is not None:
                self.loads[ap] += 1
                if listed:
                    self.listed.add(ap)

    def selection(self, fields: list[FusedField]) -> SelectionRunner:
        return fused_selection(fields) if self.fused else closure_selection(fields)

    def single_loads(self) -> frozenset[str]:
        loads = self.loads
        return frozenset(ap for ap, n in loads.items() if n == 1 and ap not in self.listed)

    def fields(self, parent: GraphQLObjectType, grouped: GroupedFieldSet) -> list[FusedField]:
        entries = []
        for response_name, details in grouped.items():
            entry = self.field(parent, response_name, details)
            if entry is not None:
                entries.append(entry)
        return entries

    def field(
        self, parent: GraphQLObjectType, response_name: str, details: FieldDetailsList
    ) -> FusedField | None:
        self.count += 1
        if any(d.fragment_variable_values is not None for d in details):
            raise Unsupported("fragment arguments")
        node = details[0].node
        name = node.name.value
        if name == "__typename":
            return FusedField(
                response_name, _typename_runner(response_name, parent, details), False
            )
        if name.startswith("__"):
            raise Unsupported("introspection")
        field_def = self.schema.get_field(parent, name)
        if field_def is None:
            return None
        self.note_loads(field_def)
        complete, complete_async = self.completer(field_def.type, parent, name, details)
        direct = direct_resolver(self.schema, (field_def, [d.node for d in details], parent))
        args = self.static_args(field_def, node)
        spec = _FieldSpec(response_name, parent, field_def, details, args)
        if direct is not None and direct.attribute is not None and _is_leaf(field_def.type):
            assert direct.of_source is not None
            settle, failed = _settlers(spec, complete)
            run = _attribute_runner(direct.of_source, settle, failed)
            inline = (
                _inline_leaf(spec.field_def, direct.attribute, settle, failed)
                if self.fused
                else None
            )
            return FusedField(response_name, run, False, inline)
        run = _field_runner(spec, complete, complete_async, direct)
        sync = direct is not None and direct.sync and not complete_async
        general = FusedField(response_name, run, not sync)
        if not self.projection:
            return general
        return projected_edges(field_def, details, self.collect, general) or general

    def static_args(self, field_def: GraphQLField, node: FieldNode) -> dict[str, Any] | None:
        """Arguments without variables coerce the same every time; one that
        fails to coerce is left to the request, where it is a field error."""
        if not field_def.args and not node.arguments:
            return {}
        if any(_has_variable(argument.value) for argument in node.arguments or ()):
            return None
        try:
            return get_argument_values(field_def, node, None, None, self.executor.hide_suggestions)
        except GraphQLError:
            return None

    def completer(
        self,
        return_type: GraphQLOutputType,
        parent: GraphQLObjectType,
        name: str,
        details: FieldDetailsList,
    ) -> tuple[Completer, bool]:
        if isinstance(return_type, GraphQLNonNull):
            of_type = return_type.of_type
            if of_type is GraphQLString or of_type is GraphQLID:
                inner = complete_non_null(complete_leaf(of_type), parent.name, name)
                return complete_text(inner), False
            if is_object_type(of_type):
                return self.object_completer(of_type, details, null_message(parent.name, name))
            inner, inner_async = self.completer(of_type, parent, name, details)
            return complete_non_null(inner, parent.name, name), inner_async
        if isinstance(return_type, GraphQLList):
            item_type = return_type.of_type
            self.lists += 1
            try:
                item, item_async = self.completer(item_type, parent, name, details)
            finally:
                self.lists -= 1
            message = f"Expected Iterable, but did not find one for field '{parent}.{name}'."
            return complete_list(item, item_type, item_async, details, message), True
        if return_type is GraphQLString or return_type is GraphQLID:
            return complete_text(complete_leaf(return_type)), False
        if is_leaf_type(return_type):
            return complete_leaf(return_type), False
        if is_object_type(return_type):
            return self.object_completer(return_type, details)
        raise Unsupported("abstract type", str(return_type))

    def object_completer(
        self,
        object_type: GraphQLObjectType,
        details: FieldDetailsList,
        non_null: str | None = None,
    ) -> tuple[Completer, bool]:
        checked = _type_check(object_type)
        fields = self.fields(object_type, self.collect(object_type, details))
        selection_async = any(entry.maybe_async for entry in fields)
        completer = complete_object(self.selection(fields), non_null, checked)
        return completer, selection_async

    def collect(self, object_type: GraphQLObjectType, details: FieldDetailsList) -> GroupedFieldSet:
        executor = self.executor
        return collect_subfields(
            self.schema,
            executor.fragments,
            executor.variable_values,
            executor.operation,
            object_type,
            details,
            executor.hide_suggestions,
        ).grouped_field_set


def _type_check(object_type: GraphQLObjectType) -> tuple[str, tuple[type, ...]] | None:
    """What the ``is_type_of`` Strawberry gives a type implementing an
    interface checks, as a class test a plan makes itself; a type with any
    other ``is_type_of`` (its own, or a generic's) is left to graphql-core."""
    if object_type.is_type_of is None:
        return None
    definition = object_type.extensions.get(GraphQLCoreConverter.DEFINITION_BACKREF)
    if (
        not isinstance(definition, StrawberryObjectDefinition)
        or definition.is_type_of is not None
        or definition.concrete_of is not None
    ):
        raise Unsupported("is_type_of", str(object_type))
    classes = (definition.origin, *(interface.origin for interface in definition.interfaces))
    return object_type.name, classes


def _is_leaf(return_type: GraphQLOutputType) -> bool:
    if isinstance(return_type, GraphQLNonNull):
        return is_leaf_type(return_type.of_type)
    return is_leaf_type(return_type)


def _attribute_runner(read: Callable[[Any], Any], settle: Settle, failed: Failed) -> FieldRunner:
    """The commonest field: an attribute holding a scalar, where a selection
    cannot write it inline (fused.py)."""

    def run(executor: PlanExecutor, source: Any, parent_path: Path | None) -> Any:
        try:
            value = read(source)
        except Exception as error:
            return failed(executor, parent_path, error)
        return settle(executor, parent_path, value)

    return run


def _inline_leaf(
    field_def: GraphQLField, attribute: str, settle: Settle, failed: Failed
) -> InlineLeaf | None:
    """The inline form of an attribute leaf, for the leaf types whose common
    values are their own output (fused.py); None for the rest."""
    leaf = field_def.type
    if isinstance(leaf, GraphQLNonNull):
        leaf = leaf.of_type
    if not inlinable(attribute):
        return None
    if leaf is GraphQLString or leaf is GraphQLID:
        return InlineLeaf(attribute, "text", settle, failed)
    if leaf is GraphQLBoolean:
        return InlineLeaf(attribute, "bool", settle, failed)
    names = enum_names(leaf) if isinstance(leaf, GraphQLEnumType) else None
    if names is None:
        return None
    members = {id(member): (name, leaf_bytes(name)) for member, name in names.items()}
    enum = getattr(leaf, "wrapped_cls", None)
    return InlineLeaf(attribute, "enum", settle, failed, enum=enum, members=members)


def _settlers(spec: _FieldSpec, complete: Completer) -> tuple[Settle, Failed]:
    """An attribute leaf's value completed, and its error handled, each with
    the key counted first; a path is built only for an error."""
    response_name, parent_name = spec.response_name, spec.parent.name
    return_type, details = spec.field_def.type, spec.details
    size = key_bytes(response_name)

    def settle(executor: PlanExecutor, parent_path: Path | None, value: Any) -> Any:
        executor.response_bytes.used += size
        try:
            return complete(executor, None, value)  # type: ignore[arg-type]
        except Exception as raw_error:
            path = Path(parent_path, response_name, parent_name)
            executor.handle_field_error(raw_error, return_type, details, path)
            return None

    def failed(executor: PlanExecutor, parent_path: Path | None, error: Exception | None) -> Any:
        """``error`` None: an inline count ran past the budget, key included."""
        if error is None:
            error = executor.response_bytes.exceeded()
        else:
            executor.response_bytes.used += size
        path = Path(parent_path, response_name, parent_name)
        executor.handle_field_error(error, return_type, details, path)
        return None

    return settle, failed


def _typename_runner(
    response_name: str, parent: GraphQLObjectType, details: FieldDetailsList
) -> FieldRunner:
    """As graphql-core, a budget running out here is this field's error."""
    type_name = parent.name
    size = key_bytes(response_name) + leaf_bytes(type_name)
    field_type = TypeNameMetaFieldDef.type

    def run(executor: PlanExecutor, source: Any, parent_path: Path | None) -> Any:
        budget = executor.response_bytes
        budget.used += size
        if budget.used > budget.limit:
            path = Path(parent_path, response_name, type_name)
            executor.handle_field_error(budget.exceeded(), field_type, details, path)
        return type_name

    return run


def _has_variable(value: Any) -> bool:
    if isinstance(value, VariableNode):
        return True
    nested = getattr(value, "values", None) or getattr(value, "fields", None) or ()
    return any(_has_variable(getattr(item, "value", item)) for item in nested)


@dataclass(frozen=True, slots=True)
class _FieldSpec:
    response_name: str
    parent: GraphQLObjectType
    field_def: GraphQLField
    details: FieldDetailsList
    static_args: dict[str, Any] | None


def _field_runner(
    spec: _FieldSpec, complete: Completer, complete_async: bool, direct: Direct | None
) -> FieldRunner:
    """With a direct resolver, the resolve info is built only if it reads it."""
    response_name, parent_name = spec.response_name, spec.parent.name
    field_def, details, parent = spec.field_def, spec.details, spec.parent
    resolve, return_type, static_args = field_def.resolve, field_def.type, spec.static_args
    assert resolve is not None
    nodes = [d.node for d in details]
    node = nodes[0]
    of_source = direct.of_source if direct is not None else None
    with_info = direct.with_info if direct is not None else None
    arguments = direct.arguments if direct is not None else ()
    maybe_awaitable = direct is None or not direct.sync
    size = key_bytes(response_name)

    def run(executor: PlanExecutor, source: Any, parent_path: Path | None) -> Any:
        executor.response_bytes.used += size
        path = new_tuple(Path, (parent_path, response_name, parent_name))
        try:
            if of_source is not None:
                result = of_source(source)
            elif with_info is not None:
                if arguments:
                    result = with_info(executor, source, path, _kwargs(executor, spec, arguments))
                else:
                    result = with_info(executor, source, path)
            else:
                args = static_args
                if args is None:
                    args = get_argument_values(
                        field_def, node, executor.variable_values, None, executor.hide_suggestions
                    )
                info = executor.build_resolve_info(field_def, nodes, parent, path)
                result = resolve(source, info, **args)
            if maybe_awaitable and type(result) not in PLAIN and awaitable(result):
                return _complete_awaited(executor, spec, complete, path, result)
            completed = complete(executor, path, result)
            if complete_async and type(completed) not in SETTLED and is_awaitable(completed):
                return _guard_field(executor, spec, path, completed)
        except Exception as raw_error:
            executor.handle_field_error(raw_error, return_type, details, path)
            return None
        return completed

    return run


def _kwargs(
    executor: PlanExecutor, spec: _FieldSpec, arguments: tuple[Argument, ...]
) -> dict[str, Any]:
    """A direct resolver's keyword arguments, as Strawberry names and
    converts them; an argument the operation leaves out is left to the
    resolver's default."""
    args = spec.static_args
    if args is None:
        args = get_argument_values(
            spec.field_def,
            spec.details[0].node,
            executor.variable_values,
            None,
            executor.hide_suggestions,
        )
    kwargs = {}
    for argument in arguments:
        name = argument.name
        if name in args:
            convert = argument.convert
            value = args[name]
            kwargs[argument.python_name] = value if convert is None else convert(value)
    return kwargs


async def _complete_awaited(
    executor: PlanExecutor, spec: _FieldSpec, complete: Completer, path: Path, result: Any
) -> Any:
    try:
        completed = complete(executor, path, await result)
        if is_awaitable(completed):
            completed = await completed
    except Exception as raw_error:
        executor.handle_field_error(raw_error, spec.field_def.type, spec.details, path)
        return None
    return completed


async def _guard_field(executor: PlanExecutor, spec: _FieldSpec, path: Path, completed: Any) -> Any:
    try:
        return await completed
    except Exception as raw_error:
        executor.handle_field_error(raw_error, spec.field_def.type, spec.details, path)
        return None


def _serial_runner(fields: list[FusedField]) -> SelectionRunner:
    """Mutation root fields run one after another."""

    async def run(executor: PlanExecutor, source: Any, path: Path | None) -> dict[str, Any]:
        results: dict[str, Any] = {}
        for entry in fields:
            value = entry.run(executor, source, path)
            if is_awaitable(value):
                value = await value
            results[entry.name] = value
        return results

    return run
