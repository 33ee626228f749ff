"""The DynamoDB backend: ``open_dynamodb``, ``check_table`` and ``create_table``.

aiobotocore's client carries the control plane; the hot calls leave on the
data plane's own signed requests (``_wire``)."""

from __future__ import annotations

from ..access_patterns import REGISTRY
from ..cursor import CursorCodec
from ..protocol import Storage
from ..store import Store
from ._reach import check_table
from ._table import create_table
from .driver import DynamoDriver

__all__ = ["DynamoDriver", "check_table", "create_table", "open_dynamodb"]


async def open_dynamodb(
    *,
    table_name: str,
    region: str,
    cursor_key: bytes,
    endpoint_url: str | None = None,
    access_key_id: str | None = None,
    secret_access_key: str | None = None,
) -> Storage:
    """Storage over one long-lived client; ``close()`` releases its connections."""
    cursors = CursorCodec(cursor_key)
    driver = await DynamoDriver.connect(
        table_name=table_name,
        region=region,
        endpoint_url=endpoint_url,
        access_key_id=access_key_id,
        secret_access_key=secret_access_key,
    )
    return Store(driver, cursors, REGISTRY)
