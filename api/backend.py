"""Opens the storage backend the settings name.

Backends are imported on demand: the embedded store should not pay for
importing the AWS SDK, and a DynamoDB deployment never touches SQLite.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .settings import MEMORY, Backend, Settings

if TYPE_CHECKING:
    from storage import Storage

__all__ = ["check_storage", "open_storage"]


async def open_storage(settings: Settings) -> Storage:
    if settings.backend is Backend.DYNAMODB:
        from storage.dynamodb import open_dynamodb

        return await open_dynamodb(
            table_name=settings.table,
            region=settings.aws_region,
            endpoint_url=settings.dynamodb_endpoint,
            cursor_key=settings.cursor_key,
        )
    from storage.sqlite import open_sqlite

    if settings.sqlite_path != MEMORY:
        Path(settings.sqlite_path).parent.mkdir(parents=True, exist_ok=True)
    return await open_sqlite(settings.sqlite_path, cursor_key=settings.cursor_key)


async def check_storage(settings: Settings) -> None:
    """Before anything says the gateway is up: missing credentials, an
    unreachable endpoint or a missing table is one line with a hint, not a
    traceback from the app's start-up. The embedded store creates itself."""
    if settings.backend is not Backend.DYNAMODB:
        return
    from storage.dynamodb import check_table

    await check_table(
        table_name=settings.table,
        region=settings.aws_region,
        endpoint_url=settings.dynamodb_endpoint,
    )
