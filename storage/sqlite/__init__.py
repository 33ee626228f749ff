"""The embedded backend, the default: one SQLite file (WAL) or ``:memory:``.

It emulates DynamoDB's limits, ordering and capacity arithmetic, so code that
works here works against the real table.
"""

from __future__ import annotations

import os

from ..access_patterns import REGISTRY
from ..cursor import CursorCodec
from ..protocol import Storage
from ..store import Store
from ._driver import SqliteDriver
from ._schema import DEFAULT_CACHE_MIB

__all__ = ["DEFAULT_CACHE_MIB", "SqliteDriver", "open_sqlite"]


async def open_sqlite(
    path: str | os.PathLike[str], *, cursor_key: bytes, cache_mib: int = DEFAULT_CACHE_MIB
) -> Storage:
    """Opens (creating if needed) the store at ``path``; several processes may
    open one file. ``cache_mib``: the page cache of each of its two connections."""
    driver = SqliteDriver(path, cache_mib=cache_mib)
    try:
        await driver.wait_ready()
    except BaseException:
        await driver.close()
        raise
    return Store(driver, CursorCodec(cursor_key), REGISTRY)
