"""Strawberry's ``Info`` with graphql-core's resolve info built on first use.

A resolver that takes ``info`` usually reads ``info.context`` and nothing
else: fifty products asking for their brand read the request's loaders.
Strawberry builds graphql-core's resolve info (a thirteen-field tuple) and
wraps it for every call; here the context is answered from the executor,
and anything else ``Info`` offers builds the same resolve info, from the same
executor, field and path, the first time it is read.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any

from graphql import FieldNode, GraphQLField, GraphQLObjectType, GraphQLResolveInfo
from graphql.pyutils import Path
from strawberry.types.info import Info

if TYPE_CHECKING:
    from strawberry.types.field import StrawberryField

    from api.graphql.execution.executor import CompiledExecutor

__all__ = ["lazy_info_class"]

Site = tuple[GraphQLField, list[FieldNode], GraphQLObjectType]
"""What a plan knows of a field at compile time: its definition, nodes and parent."""


InfoFactory = Callable[["CompiledExecutor", Site, Path, "StrawberryField"], Info]


@lru_cache(maxsize=8)
def lazy_info_class(info_class: type[Info]) -> InfoFactory | None:
    """A subclass of the schema's ``info_class`` built lazily; None when that
    class answers ``context`` its own way. One per ``info_class``: a class is
    a cycle the garbage collector alone frees, not something to make per field."""
    if info_class.context is not Info.context:
        return None

    class LazyInfo(info_class):  # type: ignore[valid-type,misc]
        def __init__(
            self, executor: CompiledExecutor, site: Site, path: Path, field: StrawberryField
        ) -> None:
            self._executor = executor
            self._site = site
            self._path = path
            self._field = field

        @property
        def context(self) -> Any:
            return self._executor.context_value

        @cached_property
        def _raw_info(self) -> GraphQLResolveInfo[Any]:
            field_def, nodes, parent = self._site
            return self._executor.build_resolve_info(field_def, nodes, parent, self._path)

    factory: InfoFactory = LazyInfo
    return factory
