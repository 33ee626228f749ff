"""Relay-style connections over a storage ``Page``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar

import strawberry

from storage import Item, Page

from ..fields import computed_field
from ..stored import EDGE_CURSOR, EDGE_NODE, PAGE_EDGES, STORED_METADATA

__all__ = ["Connection", "Edge", "PageInfo", "connection", "stored_connection"]

NodeT = TypeVar("NodeT")


class StoredNode(Protocol):
    @classmethod
    def from_item(cls, item: Item) -> Any: ...


@strawberry.type(
    description="The Cursor Connections page info. Paging runs forward only (first/after), "
    "so hasPreviousPage is always false, as the spec allows for first/after paging."
)
class PageInfo:
    """``startCursor`` and ``endCursor`` are minted (encrypted) only when
    selected: a page read for its nodes alone pays for no cursor."""

    has_next_page: bool
    has_previous_page: bool = False
    _page: strawberry.Private[Page | None] = None
    _end_cursor: strawberry.Private[str | None] = None
    _start: strawberry.Private[tuple[Page, int] | None] = None
    """The first edge's item, for a connection not made of one page."""

    @computed_field
    def start_cursor(self) -> str | None:
        page = self._page
        if page is not None:
            return page.cursor(0) if page.items else None
        if self._start is not None:
            return self._start[0].cursor(self._start[1])
        return None

    @computed_field
    def end_cursor(self) -> str | None:
        if self._page is not None:
            return self._page.end_cursor
        return self._end_cursor


@strawberry.type
class Edge(Generic[NodeT]):
    node: NodeT = strawberry.field(metadata={STORED_METADATA: EDGE_NODE})
    _page: strawberry.Private[Page]
    _index: strawberry.Private[int]

    @computed_field(metadata={STORED_METADATA: EDGE_CURSOR})
    def cursor(self) -> str:
        return self._page.cursor(self._index)


@strawberry.type
class Connection(Generic[NodeT]):
    """A connection of a stored page (``stored_connection``) builds its edges
    and nodes only when the general path asks for them: a compiled plan that
    covers the selection writes them from the page's items
    (docs/design.md, Projected pages)."""

    # A field with a resolver, declared here to keep its place before pageInfo.
    edges: list[Edge[NodeT]] = computed_field(  # type: ignore[assignment]
        resolver=lambda self: self.built_edges(), metadata={STORED_METADATA: PAGE_EDGES}
    )
    page_info: PageInfo
    _edges: strawberry.Private[list[Edge[NodeT]] | None] = None
    _page: strawberry.Private[Page | None] = None
    _node_type: strawberry.Private[type[StoredNode] | None] = None
    """The type whose ``from_item`` makes each node of ``_page``."""

    def built_edges(self) -> list[Edge[NodeT]]:
        edges = self._edges
        if edges is None:
            page, node_type = self._page, self._node_type
            assert page is not None and node_type is not None
            to_node = node_type.from_item
            edges = [
                Edge(node=to_node(item), _page=page, _index=index)
                for index, item in enumerate(page.items)
            ]
            self._edges = edges
        return edges

    def stored_page(self) -> tuple[Page, type[StoredNode]] | None:
        """The page and the node type, for a connection of stored items."""
        if self._page is None or self._node_type is None or self._edges is not None:
            return None
        return self._page, self._node_type


def connection(
    page: Page, to_node: Callable[[Item], NodeT], nodes: list[NodeT] | None = None
) -> Connection[NodeT]:
    """``nodes`` lets a caller pass nodes it loaded itself (e.g. through a
    second AP for index entries); they pair with the page's items by position."""
    values = nodes if nodes is not None else [to_node(item) for item in page.items]
    edges = [Edge(node=node, _page=page, _index=index) for index, node in enumerate(values)]
    return Connection(
        _edges=edges,
        page_info=PageInfo(has_next_page=page.has_next_page, _page=page),
    )


def stored_connection(page: Page, node_type: type[StoredNode]) -> Connection[Any]:
    """A connection whose nodes are ``node_type.from_item`` of the page's
    items, each made only if the general path reads it."""
    return Connection(
        page_info=PageInfo(has_next_page=page.has_next_page, _page=page),
        _page=page,
        _node_type=node_type,
    )
