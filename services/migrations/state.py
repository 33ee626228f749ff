"""The store's version item (AP28) and the start-up check against it.

One item holds the version and, while ``proofgate migrate`` runs a step, the
version it is migrating to and how far it got. Every change to it is
conditional on the version read before, so two migrations cannot both bump
it and an old build cannot move it backwards.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from domain.datetimes import format_datetime
from domain.errors import ConditionFailed, ConfigurationError
from storage import Compare, Comparison, ItemAbsent, Put, Storage
from storage.access_patterns import STORE_VERSION
from storage.values import Item

from .steps import BASELINE_VERSION, Step, expected_version

__all__ = [
    "StoreState",
    "newer_than_build",
    "read_state",
    "require_current",
    "stamp_new_store",
    "version_item",
]

KEY = STORE_VERSION.key()
_MIGRATE_HINT = "Run `proofgate migrate` (docs/operations.md, 'Upgrades')."


@dataclass(frozen=True)
class StoreState:
    version: int
    recorded: bool = True
    migrating_to: int | None = None
    position: str | None = None
    done: int = 0


async def read_state(storage: Storage) -> StoreState:
    """A store without the item predates recorded versions: the baseline."""
    item = await storage.get(STORE_VERSION)
    if item is None:
        return StoreState(BASELINE_VERSION, recorded=False)
    migrating = item.get("migratingTo")
    return StoreState(
        version=int(item["version"]),
        migrating_to=None if migrating is None else int(migrating),
        position=item.get("position"),
        done=int(item.get("done", 0)),
    )


def version_item(version: int, now: datetime) -> Item:
    return {
        "PK": KEY.pk,
        "SK": KEY.sk,
        "entity": "StoreVersion",
        "version": version,
        "updatedAt": format_datetime(now),
    }


def at_version(version: int) -> Compare:
    return Compare("version", Comparison.EQ, version)


async def stamp_new_store(storage: Storage, steps: Sequence[Step]) -> None:
    """A store created by this build holds items of this build's version, so
    it needs no migration. Only ever called on a store just created: on one
    with items a stamp would skip the steps they need."""
    item = version_item(expected_version(steps), datetime.now(UTC))
    # Another process may have created and stamped it first.
    with contextlib.suppress(ConditionFailed):
        await storage.transact_write([Put(item, ItemAbsent())])


def newer_than_build(state: StoreState, expected: int) -> ConfigurationError:
    return ConfigurationError(
        f"The store is at version {state.version}, newer than this build "
        f"(which reads version {expected})",
        hint=f"Upgrade proofgate to a build that reads version {state.version}; "
        "a store is never migrated backwards.",
    )


async def require_current(storage: Storage, steps: Sequence[Step]) -> StoreState:
    """Before serving: a store of another version stops start-up with the
    way forward, instead of errors on whichever item the new code misreads."""
    expected = expected_version(steps)
    state = await read_state(storage)
    if state.version > expected:
        raise newer_than_build(state, expected)
    if state.migrating_to is not None:
        raise ConfigurationError(
            f"A migration of the store to version {state.migrating_to} did not finish "
            f"({state.done} items done)",
            hint="Run `proofgate migrate` to finish it; it resumes where it stopped.",
        )
    if state.version < expected:
        raise ConfigurationError(
            f"The store is at version {state.version}; this build expects version {expected}",
            hint=_MIGRATE_HINT,
        )
    return state
