"""Product.provenance, attached to the Product type (AP09)."""

from __future__ import annotations

from typing import Protocol

from storage.access_patterns import PROVENANCE_CHAIN

from ..context import Info
from ..types.connection import Connection, connection
from .types import ProvenanceEvent

__all__ = ["ProductRoot", "product_provenance"]


class ProductRoot(Protocol):
    """What the provenance, scans and claim fields need of their Product."""

    @property
    def id(self) -> str: ...

    @property
    def brand_id(self) -> str: ...


async def product_provenance(
    root: ProductRoot, info: Info, first: int | None = None, after: str | None = None
) -> Connection[ProvenanceEvent]:
    """Public to whoever can see the product: the history is what a buyer checks."""
    page = await info.context.loaders.page(
        PROVENANCE_CHAIN, {"product_id": str(root.id)}, first=first, after=after
    )
    return connection(page, ProvenanceEvent.from_item)
