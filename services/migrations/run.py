"""``proofgate migrate``: the plan, then each step in order, resumably.

A step starts by recording the version it migrates to in the version item,
saves its position as it goes, and ends by moving the version on and
clearing both, all conditional on the version it started from
(docs/design.md, "Store versions").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from domain.datetimes import format_datetime
from domain.errors import ConditionFailed, ConfigurationError
from storage import All, AttributeAbsent, Compare, Comparison, ItemAbsent, Put, Storage, Update

from .state import KEY, StoreState, at_version, newer_than_build, read_state, version_item
from .steps import Step, expected_version

__all__ = ["Plan", "migrate", "plan"]

Report = Callable[[str], None]


@dataclass(frozen=True)
class Plan:
    state: StoreState
    expected: int
    pending: tuple[Step, ...]

    def render(self) -> str:
        if not self.pending:
            return (
                f"The store is at version {self.state.version}, as this build expects: "
                "nothing to do."
            )
        lines = [
            f"The store is at version {self.state.version}; "
            f"this build expects version {self.expected}. Steps:"
        ]
        for step in self.pending:
            line = f"  to version {step.version}: {step.summary}"
            if step.version == self.state.migrating_to:
                line += f" (resumes after {self.state.done} items)"
            lines.append(line)
        return "\n".join(lines)


async def plan(storage: Storage, steps: Sequence[Step]) -> Plan:
    expected = expected_version(steps)
    state = await read_state(storage)
    if state.version > expected:
        raise newer_than_build(state, expected)
    return Plan(state, expected, tuple(s for s in steps if s.version > state.version))


async def migrate(storage: Storage, steps: Sequence[Step], report: Report) -> Plan:
    """Runs the pending steps; returns the plan it followed. Running it again
    when nothing is pending changes nothing."""
    planned = await plan(storage, steps)
    state = planned.state
    if planned.pending and not state.recorded:
        await _write(storage, Put(version_item(state.version, _now()), ItemAbsent()))
    for step in planned.pending:
        await _run_step(storage, step, state, report)
        state = StoreState(step.version)
    return planned


class _Progress:
    def __init__(self, storage: Storage, step: Step, start: StoreState, report: Report) -> None:
        self.resuming = start.migrating_to == step.version
        self.position = start.position if self.resuming else None
        self.done = start.done if self.resuming else 0
        self._storage = storage
        self._step = step
        self._from = start.version
        self._report = report

    def _guard(self) -> All:
        return All(
            at_version(self._from), Compare("migratingTo", Comparison.EQ, self._step.version)
        )

    async def advance(self, position: str | None, done: int) -> None:
        changes: dict[str, Any] = {"done": done, "updatedAt": _stamp()}
        if position is None:
            update = Update(KEY, set=changes, remove=("position",), condition=self._guard())
        else:
            update = Update(KEY, set={**changes, "position": position}, condition=self._guard())
        await _write(storage=self._storage, action=update)
        self.position, self.done = position, done
        self._report(f"  to version {self._step.version}: {done} items done")

    async def begin(self) -> None:
        if self.resuming:
            self._report(f"  to version {self._step.version}: resuming after {self.done} items")
            return
        begin = Update(
            KEY,
            set={"migratingTo": self._step.version, "done": 0, "updatedAt": _stamp()},
            remove=("position",),
            condition=All(at_version(self._from), AttributeAbsent("migratingTo")),
        )
        await _write(self._storage, begin)

    async def finish(self) -> None:
        finish = Update(
            KEY,
            set={"version": self._step.version, "updatedAt": _stamp()},
            remove=("migratingTo", "position", "done"),
            condition=self._guard(),
        )
        await _write(self._storage, finish)
        self._report(f"  to version {self._step.version}: done ({self.done} items)")


async def _run_step(storage: Storage, step: Step, start: StoreState, report: Report) -> None:
    progress = _Progress(storage, step, start, report)
    await progress.begin()
    await step.run(storage, progress)
    await progress.finish()


async def _write(storage: Storage, action: Put | Update) -> None:
    try:
        await storage.transact_write([action])
    except ConditionFailed:
        raise ConfigurationError(
            "The store's version changed while migrating: another `proofgate migrate` runs",
            hint="Let it finish, then run `proofgate migrate` again to check.",
        ) from None


def _now() -> datetime:
    return datetime.now(UTC)


def _stamp() -> str:
    return format_datetime(_now())
