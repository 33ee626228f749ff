"""Relay-style connections over a storage ``Page``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

import strawberry

from storage import Item, Page

from ..fields import computed_field

__all__ = ["Connection", "Edge", "PageInfo", "connection"]

NodeT = TypeVar("NodeT")


@strawberry.type
class PageInfo:
    """``endCursor`` is minted (encrypted) only when it is selected: a page
    read for its nodes alone pays for no cursor."""

    has_next_page: bool
    _page: strawberry.Private[Page | None] = None
    _end_cursor: strawberry.Private[str | None] = None

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
