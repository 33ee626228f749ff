"""The Relay ``Node`` interface.

Every type with a stable identity implements it. Its field is ``nodeId``,
the global id, next to the type's own ``id``, which keeps its meaning and
its place in every argument; a Relay client names it with the compiler's
``schemaConfig.nodeInterfaceIdField``
(docs/design.md, "Global object identification").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import strawberry

from ..fields import computed_field
from .ids import global_id

__all__ = ["Node"]


@strawberry.interface(
    description="An object with a global id: node(id: nodeId) fetches it again. "
    "The type's own id is unchanged and is what every other argument takes."
)
class Node:
    if TYPE_CHECKING:
        id: strawberry.ID

    @computed_field(
        description="Opaque and global: names the type and the object, for node(id:) and "
        "nodes(ids:)"
    )
    def node_id(self) -> strawberry.ID:
        type_name: str = self.__strawberry_definition__.name  # type: ignore[attr-defined]
        return strawberry.ID(global_id(type_name, str(self.id)))
