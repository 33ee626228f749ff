"""Fields declared as reads of the stored item, once, beside their type.

A type built from a stored item (``Product.from_item``) names, on each field
that is nothing but a stored attribute, which attribute it is
(``stored("name")``); ``from_item`` is made from those declarations
(``stored_values``), and so is the compiled plan that writes a page of
such items straight from the stored items, without an object per item
(docs/design.md, Projected pages). A field built from the same item by
another type (``certificate``), one that is the item another access
pattern gets by a key the item holds (``brand``), and a connection's edges,
nodes and cursors declare what they are too. Anything undeclared (a resolver
with logic, a field that needs the caller's keys) is left to the general path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, TypeVar

import strawberry
from strawberry.types.base import StrawberryObjectDefinition
from strawberry.types.field import StrawberryField

from storage import Item

__all__ = [
    "EDGE_CURSOR",
    "EDGE_NODE",
    "PAGE_EDGES",
    "SAME_ITEM",
    "STORED_METADATA",
    "StoredAttribute",
    "StoredReference",
    "stored",
    "stored_values",
]

STORED_METADATA = "proofgate.stored"

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class StoredAttribute:
    """The field is ``item[attribute]`` (``item.get`` when ``optional``),
    through ``convert`` when one is given: an ``Enum`` class is the member
    whose value is stored (None stays None); any other callable, which gets
    None for a missing optional attribute too, leaves the field to the
    general path."""

    attribute: str
    optional: bool = False
    convert: Callable[[Any], Any] | None = None

    def read(self, item: Item) -> Any:
        value = item.get(self.attribute) if self.optional else item[self.attribute]
        if self.convert is None or (value is None and self.enum is not None):
            return value
        return self.convert(value)  # a missing ``metadata`` converts to {}

    @property
    def enum(self) -> type[Enum] | None:
        convert = self.convert
        return convert if isinstance(convert, type) and issubclass(convert, Enum) else None


@dataclass(frozen=True, slots=True)
class StoredReference:
    """The field is the item ``cached(context, item[attribute])`` finds,
    built by its type's ``from_item``: ``cached`` answers (True, the item)
    when the request already holds it, (False, None) when it must still be
    read. The same key finds the same item within one request."""

    attribute: str
    cached: Callable[[Any, Any], tuple[bool, Item | None]]

    def held(self, context: Any, item: Item) -> tuple[bool, Item | None]:
        return self.cached(context, item[self.attribute])


class _Marker:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


SAME_ITEM = _Marker("SAME_ITEM")
"""The field is its type's ``from_item`` of the parent's own item."""
PAGE_EDGES = _Marker("PAGE_EDGES")
"""A connection's edges: one per item of its stored page (``Connection.stored_page``)."""
EDGE_NODE = _Marker("EDGE_NODE")
"""An edge's node: the node type's ``from_item`` of the edge's item."""
EDGE_CURSOR = _Marker("EDGE_CURSOR")
"""An edge's cursor: the page's cursor at the edge's index."""


def stored(
    attribute: str,
    *,
    optional: bool = False,
    convert: Callable[[Any], Any] | None = None,
    **kwargs: Any,
) -> Any:
    """A field that is the stored ``attribute`` (``StoredAttribute``)."""
    metadata = {
        **kwargs.pop("metadata", {}),
        STORED_METADATA: StoredAttribute(attribute, optional, convert),
    }
    return strawberry.field(metadata=metadata, **kwargs)


_READS: dict[type, tuple[tuple[str, StoredAttribute], ...]] = {}


def stored_values(cls: type, item: Item) -> dict[str, Any]:
    """The values of ``cls``'s ``stored`` fields read from ``item``, by
    Python name: what ``from_item`` passes to the constructor."""
    reads = _READS.get(cls)
    if reads is None:
        reads = _READS[cls] = _stored_reads(cls)
    return {name: read.read(item) for name, read in reads}


def _stored_reads(cls: type) -> tuple[tuple[str, StoredAttribute], ...]:
    definition = getattr(cls, "__strawberry_definition__", None)
    assert isinstance(definition, StrawberryObjectDefinition), cls
    return tuple(
        (field.python_name, declared)
        for field in definition.fields
        if isinstance(field, StrawberryField)
        and isinstance(declared := _metadata(field).get(STORED_METADATA), StoredAttribute)
    )


def _metadata(field: StrawberryField) -> Mapping[str, Any]:
    return field.metadata or {}
