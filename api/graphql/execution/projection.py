"""A connection's edges written straight from its page's stored items.

The general path turns each item of a page into objects (an ``Edge``, a
``Product``, its ``Certificate``) whose fields the plan then reads back one
by one. When every field an edge's selection names is declared as a read of
the stored item (``resolvers/stored.py``: an attribute, the same item as
another type, an item the request already holds, the edge's node or
cursor), a plan instead generates one function per selection set that reads
the selected attributes from the item and writes the response's dict,
counting its bytes as the general path counts them.

It covers only the values the general path would write unchanged: a
printable ASCII string without a quote, None for a nullable field, an enum's
stored value. Anything else (another value, a missing attribute, a
reference not yet read, the response budget running out) abandons the
projection for the whole page: the bytes it counted are given back and the
general path answers, so errors, their paths and their order are the
general path's own (docs/design.md, Projected pages).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphql import (
    GraphQLEnumType,
    GraphQLField,
    GraphQLID,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLString,
)
from graphql.pyutils import Path
from strawberry.schema.schema_converter import GraphQLCoreConverter
from strawberry.types.base import StrawberryObjectDefinition
from strawberry.types.field import StrawberryField

from api.graphql.execution.budget import key_bytes, leaf_bytes
from api.graphql.execution.fused import FusedField
from api.graphql.execution.leaf_coercion import enum_names
from api.graphql.execution.protocols import PlanExecutor
from resolvers.stored import (
    EDGE_CURSOR,
    EDGE_NODE,
    PAGE_EDGES,
    SAME_ITEM,
    STORED_METADATA,
    StoredAttribute,
    StoredReference,
)

if TYPE_CHECKING:
    from graphql.execution.collect_fields import FieldDetailsList, GroupedFieldSet

__all__ = ["COUNTS", "Collect", "projected_edges"]

Collect = Callable[[GraphQLObjectType, "FieldDetailsList"], "GroupedFieldSet"]
"""A selection's fields, collected as the plan collects them."""

COUNTS = {"projected": 0, "abandoned": 0}
"""Pages written by a projection, and pages it left to the general path."""

_TEXT_TEST = "type(value) is str and value.isascii() and value.isprintable() and '\"' not in value"
_DEFINITION = "strawberry-definition"


class _Abandon(Exception):
    """A value the projection does not write: the general path answers."""


_ABANDON = _Abandon()


def projected_edges(
    field_def: GraphQLField, details: FieldDetailsList, collect: Collect, general: FusedField
) -> FusedField | None:
    """``general`` (the edges field's own plan) wrapped by a projection of
    its selection; None when the field is not a stored page's edges or the
    selection names anything the projection does not cover."""
    if _declared(field_def) is not PAGE_EDGES:
        return None
    edge_type = _list_item_object(field_def.type)
    if edge_type is None:
        return None
    node = next((f for f in edge_type.fields.values() if _declared(f) is EDGE_NODE), None)
    node_type = None if node is None else _object_of(node.type)
    origin = None if node_type is None else _origin(node_type)
    if origin is None:
        return None
    edge = _Builder(collect).selection(edge_type, details, edge=True)
    if edge is None:
        return None
    return FusedField(general.name, _runner(general, edge, origin), general.maybe_async)


def _runner(general: FusedField, edge: Callable[..., Any], node_type: type) -> Any:
    size = key_bytes(general.name)
    fallback = general.run

    def run(executor: PlanExecutor, source: Any, path: Path | None) -> Any:
        stored = source.stored_page() if hasattr(source, "stored_page") else None
        if stored is None or stored[1] is not node_type:
            return fallback(executor, source, path)
        page = stored[0]
        budget = executor.response_bytes
        used = budget.used
        context = executor.context_value
        memo: dict[tuple[Any, Any], Any] = {}
        try:
            budget.used += size
            edges = [
                edge(item, index, page, budget, context, memo)
                for index, item in enumerate(page.items)
            ]
            if budget.used > budget.limit:
                raise _ABANDON
        except Exception:
            budget.used = used
            COUNTS["abandoned"] += 1
            return fallback(executor, source, path)
        COUNTS["projected"] += 1
        return edges

    return run


def _declared(field_def: GraphQLField) -> Any:
    field = (field_def.extensions or {}).get(_DEFINITION)
    if not isinstance(field, StrawberryField) or field_def.args:
        return None
    metadata: Mapping[str, Any] = field.metadata or {}
    return metadata.get(STORED_METADATA)


def _list_item_object(return_type: GraphQLOutputType) -> GraphQLObjectType | None:
    if isinstance(return_type, GraphQLNonNull):
        return_type = return_type.of_type
    if not isinstance(return_type, GraphQLList):
        return None
    item = return_type.of_type
    if isinstance(item, GraphQLNonNull):
        item = item.of_type
    return item if isinstance(item, GraphQLObjectType) else None


def _object_of(return_type: GraphQLOutputType) -> GraphQLObjectType | None:
    if isinstance(return_type, GraphQLNonNull):
        return_type = return_type.of_type
    return return_type if isinstance(return_type, GraphQLObjectType) else None


def _origin(object_type: GraphQLObjectType) -> type | None:
    definition = object_type.extensions.get(GraphQLCoreConverter.DEFINITION_BACKREF)
    if not isinstance(definition, StrawberryObjectDefinition):
        return None
    return definition.origin


@dataclass
class _Generated:
    lines: list[str]
    namespace: dict[str, Any]


class _Builder:
    """Generates one function per selection set:
    ``(item, index, page, budget, context, memo) -> dict``, raising to
    abandon; ``memo`` holds the page's referenced items by lookup and key."""

    def __init__(self, collect: Collect) -> None:
        self.collect = collect

    def selection(
        self, object_type: GraphQLObjectType, details: FieldDetailsList, *, edge: bool = False
    ) -> Callable[..., Any] | None:
        grouped = self.collect(object_type, details)
        generated = _Generated([], {"ABANDON": _ABANDON})
        for index, (response_name, field_details) in enumerate(grouped.items()):
            if not self.field(generated, index, object_type, response_name, field_details, edge):
                return None
        source = "\n".join(
            [
                "def project(item, index, page, budget, context, memo):",
                "    results = {}",
                *("    " + line for line in generated.lines),
                "    return results",
            ]
        )
        namespace = generated.namespace
        exec(compile(source, "<projected selection>", "exec", dont_inherit=True), namespace)
        project: Callable[..., Any] = namespace.pop("project")
        return project

    def field(
        self,
        generated: _Generated,
        index: int,
        parent: GraphQLObjectType,
        response_name: str,
        details: FieldDetailsList,
        edge: bool,
    ) -> bool:
        if any(d.fragment_variable_values is not None for d in details):
            return False
        name = details[0].node.name.value
        key, size = repr(response_name), key_bytes(response_name)
        lines = generated.lines
        if name == "__typename":
            lines += [
                f"budget.used += {size + leaf_bytes(parent.name)}",
                f"results[{key}] = {parent.name!r}",
            ]
            return True
        field_def = parent.fields.get(name)
        if field_def is None:
            return False
        declared = _declared(field_def)
        if edge and declared is EDGE_CURSOR and _text(field_def.type):
            lines += ["value = page.cursor(index)", *_text_lines(key, size, nullable=False)]
            return True
        if isinstance(declared, StoredAttribute) and not edge:
            return _attribute(generated, index, field_def.type, declared, key, size)
        object_type = _object_of(field_def.type)
        if object_type is None:
            return False
        if (edge and declared is EDGE_NODE) or (not edge and declared is SAME_ITEM):
            source = "item"
        elif not edge and isinstance(declared, StoredReference):
            # Fifty products of one brand: its item is looked up once a page.
            generated.namespace[f"cached_{index}"] = declared.cached
            lines += [
                f"key = (cached_{index}, item[{declared.attribute!r}])",
                "held = memo.get(key)",
                "if held is None:",
                f"    hit, held = cached_{index}(context, key[1])",
                "    if not hit or held is None:",
                "        raise ABANDON",
                "    memo[key] = held",
            ]
            source = "held"
        else:
            return False
        selection = self.selection(object_type, details)
        if selection is None:
            return False
        generated.namespace[f"select_{index}"] = selection
        lines += [
            f"budget.used += {size}",
            f"results[{key}] = select_{index}({source}, index, page, budget, context, memo)",
        ]
        return True


def _text(return_type: GraphQLOutputType) -> bool:
    if isinstance(return_type, GraphQLNonNull):
        return_type = return_type.of_type
    return return_type is GraphQLString or return_type is GraphQLID


def _attribute(
    generated: _Generated,
    index: int,
    return_type: GraphQLOutputType,
    declared: StoredAttribute,
    key: str,
    size: int,
) -> bool:
    nullable = not isinstance(return_type, GraphQLNonNull)
    leaf = return_type.of_type if isinstance(return_type, GraphQLNonNull) else return_type
    attribute = repr(declared.attribute)
    read = f"item.get({attribute})" if declared.optional else f"item[{attribute}]"
    lines = generated.lines
    if declared.convert is None and (leaf is GraphQLString or leaf is GraphQLID):
        lines += [f"value = {read}", *_text_lines(key, size, nullable)]
        return True
    enum = declared.enum
    if enum is None or not isinstance(leaf, GraphQLEnumType) or leaf.wrapped_cls is not enum:  # type: ignore[attr-defined]
        return False
    names = enum_names(leaf)
    if names is None:
        return False
    generated.namespace[f"members_{index}"] = {
        member.value: (name, size + leaf_bytes(name)) for member, name in names.items()
    }
    lines += [f"value = {read}"]
    if nullable:
        lines += ["if value is None:", f"    budget.used += {size}", f"    results[{key}] = None"]
        lines += ["else:", f"    name, count = members_{index}[value]"]
    else:
        lines += [f"name, count = members_{index}[value]"]
    indent = "    " if nullable else ""
    lines += [f"{indent}budget.used += count", f"{indent}results[{key}] = name"]
    return True


def _text_lines(key: str, size: int, nullable: bool) -> list[str]:
    """Printable ASCII escapes only the backslash (budget.leaf_bytes); a
    None costs its key alone, as the general path counts it."""
    lines = []
    if nullable:
        lines += ["if value is None:", f"    budget.used += {size}", f"    results[{key}] = None"]
        lines += [f"elif {_TEXT_TEST}:"]
    else:
        lines += [f"if {_TEXT_TEST}:"]
    return [
        *lines,
        f"    budget.used += {size + 2} + len(value) + value.count('\\\\')",
        f"    results[{key}] = value",
        "else:",
        "    raise ABANDON",
    ]
