"""Input types of scalar fields only, built without Strawberry's generic walk.

Strawberry converts an input value field by field: for each field it resolves
the field's type, converts the field's name to its GraphQL spelling and
recurses into ``convert_argument``, which for a scalar hands the value back
unchanged. For ``ScanInput``, sent with every verification, that walk cost
about 35 us a request (docs/design.md, "Verify path"). A leaf input builds
the instance from the names worked out once, through the ``from_input`` hook
Strawberry offers for types that build their own value; the result is the one
Strawberry's walk builds (a differential test holds the two together).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from strawberry.types.arguments import InputContext
from strawberry.types.base import StrawberryMaybe, StrawberryOptional, get_object_definition

__all__ = ["LeafBuilder", "leaf_input"]

T = TypeVar("T")

_LEAVES = (str, int, float, bool)
"""Scalars whose Strawberry conversion is the identity; not ``ID`` or
``GlobalID``, whose conversion is not, nor enums."""


class LeafBuilder:
    """The ``from_input`` of one leaf input type; a compiled plan builds the
    value itself through ``converter``, without Strawberry's resolver
    wrapper (``api/graphql/execution/resolve.py``)."""

    def __init__(self, cls: type, fields: list[Any], required: tuple[str, ...]) -> None:
        self._cls = cls
        self._fields = fields
        self._required = required
        self._names: tuple[Any, tuple[tuple[str, str], ...]] | None = None
        """(name converter, (GraphQL name, Python name) per field): the names
        of the one schema config that builds this type."""

    def _pairs(self, converter: Any) -> tuple[tuple[str, str], ...]:
        names = self._names
        if names is None or names[0] is not converter:
            pairs = tuple(
                (converter.from_field(field), field.python_name) for field in self._fields
            )
            names = self._names = (converter, pairs)
        return names[1]

    def __call__(self, cls: type, value: Mapping[str, Any], context: InputContext) -> Any:
        return _build(cls, self._required, self._pairs(context.config.name_converter), value)

    def converter(self, name_converter: Any) -> Callable[[Mapping[str, Any] | None], Any]:
        """What Strawberry's ``convert_argument`` makes of a value of this
        type (or of null) coerced by graphql-core, under ``name_converter``."""
        cls, required, pairs = self._cls, self._required, self._pairs(name_converter)

        def convert(value: Mapping[str, Any] | None) -> Any:
            return None if value is None else _build(cls, required, pairs, value)

        return convert


def _build(
    cls: type,
    required: tuple[str, ...],
    pairs: tuple[tuple[str, str], ...],
    value: Mapping[str, Any],
) -> Any:
    # As Strawberry does: None for a field without a default, which a valid
    # document always overrides, then the fields the value holds.
    kwargs: dict[str, Any] = dict.fromkeys(required)
    for graphql_name, python_name in pairs:
        if graphql_name in value:
            kwargs[python_name] = value[graphql_name]
    return cls(**kwargs)


def _is_leaf(type_: Any) -> bool:
    if isinstance(type_, StrawberryMaybe):
        return False
    if isinstance(type_, StrawberryOptional):
        type_ = type_.of_type
    return type_ in _LEAVES


def leaf_input(cls: type[T]) -> type[T]:
    """Marks a ``@strawberry.input`` whose fields are all ``str``, ``int``,
    ``float`` or ``bool`` (optional or not); anything else is refused at import."""
    definition = get_object_definition(cls, strict=True)
    if not definition.is_input or definition.from_input is not None:
        raise TypeError(f"{cls.__name__} is not a plain Strawberry input type")
    fields = list(definition.fields)
    for field in fields:
        if not _is_leaf(field.resolve_type(type_definition=definition)):
            raise TypeError(f"{cls.__name__}.{field.python_name} is not a scalar leaf field")
    required = tuple(
        field.python_name
        for field in fields
        if field.default_value is dataclasses.MISSING
        and field.default_factory is dataclasses.MISSING
    )
    definition.from_input = LeafBuilder(cls, fields, required)
    return cls
