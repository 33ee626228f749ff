"""Fields that declare the one access pattern they read.

``ap_field(AP)`` records the AP in the field's metadata; the schema walk test
and ``proofgate explain`` read it back, so the field -> AP map is never written
down by hand. Fields computed from their parent declare ``computed_field``.

A field that finds its result through an index or lookup item (``brands``
reads AP02 entries, ``productByCode`` reads AP05) declares that AP and names
the entity's get pattern with ``loads=``: the entity read is the batched
DataLoader fetch of the type it returns, not a second query of its own.
Mutations declare ``mutation_field(reads=AP)`` with the one AP they read
before writing, if any. ``node(id:)`` and ``nodes(ids:)`` declare
``node_field``: one get pattern per type they may return, the type the
global id names choosing which
(docs/design.md, "Global object identification").
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple, TypeVar, overload

import strawberry
from strawberry.types.base import StrawberryObjectDefinition
from strawberry.types.field import StrawberryField

from storage import AccessPattern

__all__ = [
    "AP_METADATA",
    "COMPUTED_METADATA",
    "LOADS_METADATA",
    "NODE_METADATA",
    "WRITES_METADATA",
    "FieldAccess",
    "ap_field",
    "computed_field",
    "field_access_patterns",
    "mutation_field",
    "node_field",
]

AP_METADATA = "proofgate.ap"
COMPUTED_METADATA = "proofgate.computed"
LOADS_METADATA = "proofgate.loads"
NODE_METADATA = "proofgate.node"
WRITES_METADATA = "proofgate.writes"


_F = TypeVar("_F", bound=Callable[..., Any])


def _field(
    factory: Callable[..., Any], resolver: Any, metadata: dict[str, Any], kwargs: dict[str, Any]
) -> Any:
    if resolver is None:
        return factory(metadata=metadata, **kwargs)
    return factory(resolver=resolver, metadata=metadata, **kwargs)


# The decorators are typed as returning the resolver, which is what mypy needs
# to check it; at run time Strawberry's field object takes its place.
@overload
def ap_field(
    ap: AccessPattern, resolver: _F, *, loads: AccessPattern | None = None, **kwargs: Any
) -> _F: ...
@overload
def ap_field(
    ap: AccessPattern, resolver: None = None, *, loads: AccessPattern | None = None, **kwargs: Any
) -> Callable[[_F], _F]: ...
def ap_field(
    ap: AccessPattern, resolver: Any = None, *, loads: AccessPattern | None = None, **kwargs: Any
) -> Any:
    metadata = {**kwargs.pop("metadata", {}), AP_METADATA: ap.id}
    if loads is not None:
        metadata[LOADS_METADATA] = loads.id
    return _field(strawberry.field, resolver, metadata, kwargs)


@overload
def computed_field(resolver: _F, **kwargs: Any) -> _F: ...
@overload
def computed_field(resolver: None = None, **kwargs: Any) -> Callable[[_F], _F]: ...
def computed_field(resolver: Any = None, **kwargs: Any) -> Any:
    metadata = {**kwargs.pop("metadata", {}), COMPUTED_METADATA: True}
    return _field(strawberry.field, resolver, metadata, kwargs)


@overload
def mutation_field(resolver: _F, *, reads: AccessPattern | None = None, **kwargs: Any) -> _F: ...
@overload
def mutation_field(
    resolver: None = None, *, reads: AccessPattern | None = None, **kwargs: Any
) -> Callable[[_F], _F]: ...
def mutation_field(
    resolver: Any = None, *, reads: AccessPattern | None = None, **kwargs: Any
) -> Any:
    metadata: dict[str, Any] = {**kwargs.pop("metadata", {}), WRITES_METADATA: True}
    if reads is not None:
        metadata[AP_METADATA] = reads.id
    return _field(strawberry.mutation, resolver, metadata, kwargs)


@overload
def node_field(patterns: Mapping[str, AccessPattern], resolver: _F, **kwargs: Any) -> _F: ...
@overload
def node_field(
    patterns: Mapping[str, AccessPattern], resolver: None = None, **kwargs: Any
) -> Callable[[_F], _F]: ...
def node_field(patterns: Mapping[str, AccessPattern], resolver: Any = None, **kwargs: Any) -> Any:
    """``patterns``: the get pattern of each type the field may return, by type name."""
    dispatch = tuple((name, pattern.id) for name, pattern in patterns.items())
    metadata = {**kwargs.pop("metadata", {}), NODE_METADATA: dispatch}
    return _field(strawberry.field, resolver, metadata, kwargs)


class FieldAccess(NamedTuple):
    type_name: str
    field_name: str
    access_pattern: str | None
    has_resolver: bool
    """A resolver that is neither computed from its parent nor a mutation: it
    must declare an access pattern."""
    loads: str | None = None
    writes: bool = False
    by_type: tuple[tuple[str, str], ...] = ()
    """``node_field``: (type name, AP) for each type it may return, in place of one AP."""


def field_access_patterns(schema: strawberry.Schema) -> Iterator[FieldAccess]:
    """Every object-type field in the schema, by its GraphQL name, with what it declares."""
    names = schema.config.name_converter
    for type_definition in schema.schema_converter.type_map.values():
        definition = type_definition.definition
        if not isinstance(definition, StrawberryObjectDefinition):
            continue
        for strawberry_field in definition.fields:
            if not isinstance(strawberry_field, StrawberryField):
                continue
            metadata: dict[str, Any] = dict(strawberry_field.metadata or {})
            writes = bool(metadata.get(WRITES_METADATA))
            has_resolver = (
                strawberry_field.base_resolver is not None
                and not metadata.get(COMPUTED_METADATA)
                and not writes
            )
            yield FieldAccess(
                definition.name,
                names.get_graphql_name(strawberry_field),
                metadata.get(AP_METADATA),
                has_resolver,
                metadata.get(LOADS_METADATA),
                writes,
                metadata.get(NODE_METADATA, ()),
            )
