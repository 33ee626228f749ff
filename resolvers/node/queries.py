"""node(id:) and nodes(ids:): Relay's refetch by global id.

The global id names the type, and the type its get pattern (``kinds``):
``nodes`` reads each type's ids in one batch through that pattern's
DataLoader, so a list of fifty products is one BatchGetItem. Visibility is
the typed field's: whatever that field would not show is NOT_FOUND.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, cast

import strawberry

from domain.errors import BadUserInput, NotFound, ProofgateError
from storage.limits import BATCH_GET_MAX_KEYS

from ..context import Info
from ..fields import node_field
from .ids import parse_global_id
from .kinds import NODE_KINDS, NodeKind
from .types import Node

__all__ = ["NODES_MAX_IDS", "NodeQueries"]

NODES_MAX_IDS = BATCH_GET_MAX_KEYS
_PATTERNS = {name: kind.pattern for name, kind in NODE_KINDS.items()}


def _kind(type_name: str) -> NodeKind:
    kind = NODE_KINDS.get(type_name)
    if kind is None:
        raise BadUserInput("Invalid node id", hint="Use a nodeId returned by the API.")
    return kind


def _parse(text: object) -> tuple[NodeKind, Mapping[str, Any]]:
    type_name, raw = parse_global_id(text)
    kind = _kind(type_name)
    return kind, kind.params(raw)


@strawberry.type
class NodeQueries:
    @node_field(_PATTERNS, description="The object a nodeId names, if the caller may see it")
    async def node(self, info: Info, id: strawberry.ID) -> Node:
        info.context.principal.require_authenticated()
        return await _read(info, id)

    @node_field(
        _PATTERNS,
        description=f"The objects the nodeIds name, in order (at most {NODES_MAX_IDS}); an "
        "entry the caller may not see is null, with its error",
    )
    async def nodes(self, info: Info, ids: list[strawberry.ID]) -> list[Node | None]:
        info.context.principal.require_authenticated()
        if len(ids) > NODES_MAX_IDS:
            raise BadUserInput(f"nodes takes at most {NODES_MAX_IDS} ids, got {len(ids)}")
        # Read together, the DataLoaders batch each type's ids into one read. A
        # failed entry is its error: graphql-core nulls it and reports it at its index.
        entries = await asyncio.gather(*(_entry(info, text) for text in ids))
        return cast(list[Node | None], entries)


async def _read(info: Info, text: str) -> Node:
    kind, params = _parse(text)
    item = await info.context.loaders.item(kind.pattern, **params)
    if item is None or not kind.readable(info.context.principal, item):
        raise NotFound("Node not found")
    return kind.build(item)


async def _entry(info: Info, text: str) -> Node | ProofgateError:
    try:
        return await _read(info, text)
    except ProofgateError as error:
        return error
