"""Opens the storage backend the settings name.

Backends are imported on demand: the embedded store should not pay for
importing the AWS SDK, and a DynamoDB deployment never touches SQLite.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

from api.settings.gateway import MEMORY, Backend, Settings
from domain.errors import ConfigurationError
from services.migrations import require_current, stamp_new_store
from services.migrations import steps as migration_steps

if TYPE_CHECKING:
    from services.migrations import Step
    from storage import Storage

__all__ = [
    "cached",
    "check_storage",
    "job_storage",
    "migration_steps_of_this_build",
    "open_storage",
    "stamp_new_table",
]


def migration_steps_of_this_build() -> tuple[Step, ...]:
    return migration_steps.STEPS


async def open_storage(settings: Settings, *, current: bool = True) -> Storage:
    """The store, refused unless it is at this build's version (``current``),
    which only ``proofgate migrate`` does without.

    See docs/design.md, "Store versions"."""
    storage, created = await _open(settings)
    try:
        if created:
            await stamp_new_store(storage, migration_steps_of_this_build())
        if current:
            await require_current(storage, migration_steps_of_this_build())
    except BaseException:
        await storage.close()
        raise
    return cached(storage, settings)


@contextlib.asynccontextmanager
async def job_storage(settings: Settings, *, current: bool = True) -> AsyncIterator[Storage]:
    """The store for a CLI job, closed after; with the cache and Redis on,
    its writes' invalidations are published, and sent before it closes
    (docs/design.md, Cache invalidations across processes)."""
    from api.runtime.cache_channel import running_cache_channel

    storage = await open_storage(settings, current=current)
    try:
        async with running_cache_channel(settings, storage, drain=True):
            yield storage
    finally:
        await storage.close()


def cached(storage: Storage, settings: Settings) -> Storage:
    """``storage`` behind the exact cache when the settings turn it on: built
    here, once, so every writer of this process (commands, the relay,
    ingest, the CLI's jobs) writes through it (docs/design.md, Storage cache)."""
    if not settings.cache:
        return storage
    from storage.cache import CachedStorage, LocalFreshness

    return CachedStorage(
        storage,
        max_bytes=settings.cache_bytes,
        ttl_seconds=settings.cache_ttl_ms / 1000,
        freshness=LocalFreshness(sole_writer=settings.cache_sole_writer),
    )


async def _open(settings: Settings) -> tuple[Storage, bool]:
    if settings.backend is Backend.DYNAMODB:
        from storage.dynamodb import open_dynamodb

        storage = await open_dynamodb(
            table_name=settings.table,
            region=settings.aws_region,
            endpoint_url=settings.dynamodb_endpoint,
            cursor_key=settings.cursor_key,
        )
        # ``create-table`` stamps a new table; see ``stamp_new_table``.
        return storage, False
    from storage.sqlite import open_sqlite

    created = settings.sqlite_path == MEMORY or not Path(settings.sqlite_path).exists()
    if settings.sqlite_path != MEMORY:
        _make_parent(Path(settings.sqlite_path))
    storage = await open_sqlite(
        settings.sqlite_path, cursor_key=settings.cursor_key, cache_mib=settings.sqlite_cache_mb
    )
    return storage, created


def _make_parent(path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigurationError(
            f"Cannot create {path.parent} for the SQLite store: {error.strerror or error}",
            hint="Point PROOFGATE_SQLITE_PATH (or --data-dir) at a directory this user can write.",
        ) from None


async def stamp_new_table(*, table: str, region: str, endpoint: str | None) -> None:
    """Records this build's version in a table ``create-table`` just created."""
    from storage.dynamodb import open_dynamodb

    # No cursor is minted here: any key does.
    storage = await open_dynamodb(
        table_name=table, region=region, endpoint_url=endpoint, cursor_key=os.urandom(32)
    )
    try:
        await stamp_new_store(storage, migration_steps_of_this_build())
    finally:
        await storage.close()


async def check_storage(settings: Settings) -> None:
    """Before anything says the gateway is up: missing credentials, an
    unknown host, a missing table or a store of another version is one line
    with a hint (``ConfigurationError``), not a traceback from the app's
    start-up; a store that is down is ``ServiceUnavailable``, which ``serve``
    waits through (docs/design.md, Degraded start). The embedded store
    creates itself."""
    if settings.backend is Backend.DYNAMODB:
        from storage.dynamodb import check_table

        await check_table(
            table_name=settings.table,
            region=settings.aws_region,
            endpoint_url=settings.dynamodb_endpoint,
        )
    storage = await open_storage(settings)
    await storage.close()
