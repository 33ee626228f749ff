"""Tables made on the session's moto server, dropped when what made them ends.

moto keeps its tables in the test process's own memory: every item as a tree
of attribute objects, every stream record, every table ever created. Kept for
the whole session, the API tests alone left 1,479 tables and 4.6 million
objects (1.2 GB) in one worker, and each full collection of that heap held
the worker's event loop for seconds (3-14 s at load): long enough for a test
waiting 4.5 s on an alert to time out in CI, though nothing was wrong but the
pause. Most of it was not the live tables: moto's models keep every instance
they ever made (for moto's dashboard), and a transaction deep-copies each
table it touches to roll back with, so every transaction left a whole copy
of its table behind. So those instances are forgotten after each test, and
a table lives as long as the fixture or the test that made it: the
fixture's teardown runs first (its gateway and relay stop), then its tables
go (``tests/conftest.py``).
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["claim", "drop", "existing", "forget_instances"]

Table = tuple[Any, str]
"""A moto backend (one account and region) and a table name in it."""


def _backends() -> list[Any]:
    models = sys.modules.get("moto.dynamodb.models")
    if models is None:
        return []
    # list() of a dict copies it in one step under the GIL, while moto's
    # server threads may be creating tables.
    return [
        backend
        for account in list(models.dynamodb_backends.values())
        for backend in list(account.values())
    ]


def existing() -> set[Table]:
    return {(backend, name) for backend in _backends() for name in list(backend.tables)}


_claimed: set[Table] = set()
"""Tables a fixture or test has made and not yet dropped."""


def claim(before: set[Table]) -> set[Table]:
    """The tables made since ``before`` that no one claimed yet: a fixture
    that sets up another within its own setup (``getfixturevalue``) does not
    claim the inner fixture's tables, which may outlive it."""
    made = existing() - before - _claimed
    _claimed.update(made)
    return made


def drop(tables: set[Table]) -> None:
    for table in tables:
        backend, name = table
        backend.tables.pop(name, None)
        _claimed.discard(table)


def forget_instances() -> None:
    """moto's list of every model instance it made (for its dashboard, which
    no test reads), the tables' rollback copies among them."""
    if "moto.core.model_instances" in sys.modules:
        sys.modules["moto.core.model_instances"].reset_model_data()
