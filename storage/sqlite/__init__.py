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

__all__ = ["SqliteDriver", "open_sqlite"]


async def open_sqlite(path: str | os.PathLike[str], *, cursor_key: bytes) -> Storage:
    """Opens (creating if needed) the store at ``path``; several processes may
    open one file."""
    driver = SqliteDriver(path)
    try:
        await driver.wait_ready()
    except BaseException:
        await driver.close()
        raise
    return Store(driver, CursorCodec(cursor_key), REGISTRY)
