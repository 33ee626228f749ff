"""Relay-style connections over a storage ``Page``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

import strawberry

from storage import Item, Page

from ..fields import computed_field

__all__ = ["Connection", "Edge", "PageInfo", "connection"]

NodeT = TypeVar("NodeT")


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
    node: NodeT
    _page: strawberry.Private[Page]
    _index: strawberry.Private[int]

    @computed_field
    def cursor(self) -> str:
        return self._page.cursor(self._index)


@strawberry.type
class Connection(Generic[NodeT]):
    edges: list[Edge[NodeT]]
    page_info: PageInfo


def connection(
    page: Page, to_node: Callable[[Item], NodeT], nodes: list[NodeT] | None = None
) -> Connection[NodeT]:
    """``nodes`` lets a caller pass nodes it loaded itself (e.g. through a
    second AP for index entries); they pair with the page's items by position."""
    values = nodes if nodes is not None else [to_node(item) for item in page.items]
    edges = [Edge(node=node, _page=page, _index=index) for index, node in enumerate(values)]
    return Connection(
        edges=edges,
        page_info=PageInfo(has_next_page=page.has_next_page, _page=page),
    )
