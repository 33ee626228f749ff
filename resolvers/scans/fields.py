"""Product.scans, attached to the Product type (AP10)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from services.visibility import require_owner
from storage.access_patterns import PRODUCT_SCANS

from ..context import Info
from ..provenance.fields import ProductRoot
from ..types.connection import Connection, connection
from ..types.scalars import DateTime
from .types import Scan

__all__ = ["SCANS_EPOCH", "product_scans"]

SCANS_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_AFTER_NOW = timedelta(seconds=1)


async def product_scans(
    root: ProductRoot,
    info: Info,
    since: DateTime | None = None,
    until: DateTime | None = None,
    first: int | None = None,
    after: str | None = None,
) -> Connection[Scan] | None:
    """Scans with ``since <= scannedAt < until``, newest first; the brand's
    keys only. Without bounds: everything up to now. Pass the same bounds
    with ``after`` (a cursor is only valid within its range)."""
    require_owner(info.context.principal, root.brand_id, "scans")
    start = since if since is not None else SCANS_EPOCH
    end = until if until is not None else info.context.now() + _AFTER_NOW
    params = {"product_id": str(root.id), "start": start, "end": end}
    page = await info.context.loaders.page(PRODUCT_SCANS, params, first=first, after=after)
    return connection(page, Scan.from_item)
