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
from api.graphql.execution.encoded import EncodedList
from api.graphql.execution.fused import FusedField
from api.graphql.execution.leaf_coercion import enum_names
from api.graphql.execution.protocols import PlanExecutor
from api.observability.fallbacks import fell_back, took, unexpected
from api.settings.limits import Lane
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

__all__ = ["Collect", "projected_edges"]

Collect = Callable[[GraphQLObjectType, "FieldDetailsList"], "GroupedFieldSet"]
"""A selection's fields, collected as the plan collects them."""


_TEXT_TEST = "type(value) is str and value.isascii() and value.isprintable() and '\"' not in value"
_DEFINITION = "strawberry-definition"


class _Abandon(Exception):
    """A value the projection does not write: the general path answers."""

    @property
    def cause(self) -> str:
        return str(self.args[0])


_EDGE_BYTES = 64
"""What a kept edge costs besides its JSON, as the storage cache counts an
item's (docs/design.md, Storage cache)."""

_NOT_PLAIN = _Abandon("text it does not write unchanged")
_NOT_HELD = _Abandon("a referenced item not yet read")


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
    project = _Builder(collect).edges(edge_type, details)
    if project is None:
        return None
    return FusedField(general.name, _runner(general, project, origin), general.maybe_async)


def _runner(general: FusedField, project: Callable[..., Any], node_type: type) -> Any:
    size = key_bytes(general.name)
    fallback = general.run

    def run(executor: PlanExecutor, source: Any, path: Path | None) -> Any:
        stored = source.stored_page() if hasattr(source, "stored_page") else None
        if stored is None or stored[1] is not node_type:
            fell_back(Lane.PROJECTION, "page not stored")
            return fallback(executor, source, path)
        page = stored[0]
        budget = executor.response_bytes
        context = executor.context_value
        derived = page.derived
        try:
            if derived is not None and derived[0] is project and _still_held(derived[1], context):
                edges, used = derived[2], derived[3]
            else:
                edges, used, memo = project(page.items, page, context)
                kept = used + _EDGE_BYTES * len(edges)
                if page.charged:  # served again: encoded once, kept as bytes too
                    edges, kept = EncodedList(edges), kept + used
                page.derive((project, memo, edges, used), kept)
        except _Abandon as abandon:
            fell_back(Lane.PROJECTION, abandon.cause)
            return fallback(executor, source, path)
        except KeyError:
            fell_back(Lane.PROJECTION, "attribute missing or enum value unknown")
            return fallback(executor, source, path)
        except Exception as error:  # a read of a reference, say: the general path says
            unexpected(Lane.PROJECTION, error)
            return fallback(executor, source, path)
        if budget.used + size + used > budget.limit:
            fell_back(Lane.PROJECTION, "response budget")
            return fallback(executor, source, path)
        budget.used += size + used
        took(Lane.PROJECTION)
        return edges

    return run


def _still_held(memo: dict[tuple[Any, Any], Any], context: Any) -> bool:
    for (cached, value), item in memo.items():
        hit, held = cached(context, value)
        if not hit or held is not item:
            return False
    return True


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


class _Builder:
    """Generates, for an edge's selection, one function
    ``(items, page, context) -> (edges, bytes)``: a loop over the page's
    items in which each selection set is a few lines writing a dict, and
    which raises to abandon. ``memo`` holds the page's referenced items by
    lookup and key; the bytes reach the budget only once the page is done."""

    def __init__(self, collect: Collect) -> None:
        self.collect = collect
        self.namespace: dict[str, Any] = {"NOT_PLAIN": _NOT_PLAIN, "NOT_HELD": _NOT_HELD}
        self.lines: list[str] = []
        self.objects = 0

    def edges(
        self, edge_type: GraphQLObjectType, details: FieldDetailsList
    ) -> Callable[..., Any] | None:
        if not self.selection(edge_type, details, "item", edge=True):
            return None
        source = "\n".join(
            [
                "def project(items, page, context):",
                "    used = 0",
                "    memo = {}",
                "    edges = []",
                "    for index, item in enumerate(items):",
                *("        " + line for line in self.lines),
                "        edges.append(r0)",
                "    return edges, used, memo",
            ]
        )
        namespace = self.namespace
        exec(compile(source, "<projected selection>", "exec", dont_inherit=True), namespace)
        project: Callable[..., Any] = namespace.pop("project")
        return project

    def selection(
        self,
        object_type: GraphQLObjectType,
        details: FieldDetailsList,
        item: str,
        *,
        edge: bool = False,
    ) -> str | None:
        """The lines that fill a new dict from ``item``; its variable's name."""
        results = f"r{self.objects}"
        self.objects += 1
        self.lines.append(f"{results} = {{}}")
        for response_name, field_details in self.collect(object_type, details).items():
            site = _Site(object_type, response_name, field_details, item, results)
            if not self.field(site, edge):
                return None
        return results

    def field(self, site: _Site, edge: bool) -> bool:
        details = site.details
        if any(d.fragment_variable_values is not None for d in details):
            return False
        name = details[0].node.name.value
        parent, lines = site.parent, self.lines
        if name == "__typename":
            lines += [
                f"used += {site.size + leaf_bytes(parent.name)}",
                f"{site.target} = {parent.name!r}",
            ]
            return True
        field_def = parent.fields.get(name)
        if field_def is None:
            return False
        declared = _declared(field_def)
        if edge and declared is EDGE_CURSOR and _text(field_def.type):
            lines += ["value = page.cursor(index)", *_text_lines(site, nullable=False)]
            return True
        if isinstance(declared, StoredAttribute) and not edge:
            return self.attribute(site, field_def.type, declared)
        object_type = _object_of(field_def.type)
        if object_type is None:
            return False
        if (edge and declared is EDGE_NODE) or (not edge and declared is SAME_ITEM):
            item = site.item
        elif not edge and isinstance(declared, StoredReference):
            item = self.reference(site.item, declared)
        else:
            return False
        lines.append(f"used += {site.size}")
        nested = self.selection(object_type, details, item)
        if nested is None:
            return False
        lines.append(f"{site.target} = {nested}")
        return True

    def reference(self, item: str, declared: StoredReference) -> str:
        """Fifty products of one brand: its item is looked up once a page."""
        number = self.objects
        self.objects += 1
        cached, key, held = f"cached_{number}", f"k{number}", f"h{number}"
        self.namespace[cached] = declared.cached
        self.lines += [
            f"{key} = ({cached}, {item}[{declared.attribute!r}])",
            f"{held} = memo.get({key})",
            f"if {held} is None:",
            f"    hit, {held} = {cached}(context, {key}[1])",
            f"    if not hit or {held} is None:",
            "        raise NOT_HELD",
            f"    memo[{key}] = {held}",
        ]
        return held

    def attribute(
        self, site: _Site, return_type: GraphQLOutputType, declared: StoredAttribute
    ) -> bool:
        nullable = not isinstance(return_type, GraphQLNonNull)
        leaf = return_type.of_type if isinstance(return_type, GraphQLNonNull) else return_type
        attribute, item = repr(declared.attribute), site.item
        read = f"{item}.get({attribute})" if declared.optional else f"{item}[{attribute}]"
        if declared.convert is None and (leaf is GraphQLString or leaf is GraphQLID):
            self.lines += [f"value = {read}", *_text_lines(site, nullable)]
            return True
        enum = declared.enum
        if not isinstance(leaf, GraphQLEnumType) or enum is None or leaf.wrapped_cls is not enum:  # type: ignore[attr-defined]
            return False
        names = enum_names(leaf)
        if names is None:
            return False
        members = f"members_{self.objects}"
        self.objects += 1
        self.namespace[members] = {
            member.value: (name, site.size + leaf_bytes(name)) for member, name in names.items()
        }
        self.lines.append(f"value = {read}")
        indent = ""
        if nullable:
            self.lines += [*_null_lines(site), "else:"]
            indent = "    "
        self.lines += [
            f"{indent}name, count = {members}[value]",
            f"{indent}used += count",
            f"{indent}{site.target} = name",
        ]
        return True


@dataclass(frozen=True, slots=True)
class _Site:
    """A field of a selection: where its value comes from and goes."""

    parent: GraphQLObjectType
    response_name: str
    details: FieldDetailsList
    item: str
    """The variable holding the stored item the selection reads."""
    results: str
    """The variable holding the selection's dict."""

    @property
    def size(self) -> int:
        return key_bytes(self.response_name)

    @property
    def target(self) -> str:
        return f"{self.results}[{self.response_name!r}]"


def _text(return_type: GraphQLOutputType) -> bool:
    if isinstance(return_type, GraphQLNonNull):
        return_type = return_type.of_type
    return return_type is GraphQLString or return_type is GraphQLID


def _null_lines(site: _Site) -> list[str]:
    """A None costs its key alone, as the general path counts it."""
    return ["if value is None:", f"    used += {site.size}", f"    {site.target} = None"]


def _text_lines(site: _Site, nullable: bool) -> list[str]:
    """Printable ASCII escapes only the backslash (budget.leaf_bytes)."""
    lines = [*_null_lines(site), f"elif {_TEXT_TEST}:"] if nullable else [f"if {_TEXT_TEST}:"]
    return [
        *lines,
        f"    used += {site.size + 2} + len(value) + value.count('\\\\')",
        f"    {site.target} = value",
        "else:",
        "    raise NOT_PLAIN",
    ]
