"""The steps between store versions.

A store's version names the shape of its items. Version 1 is the baseline:
every store written before versions were recorded, and every store this
build creates. A change to stored items that old code could not read, or new
code could not read without a rewrite, adds a ``Step`` here and so raises the
version this build expects (docs/design.md, "Store versions").
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from storage import Storage

__all__ = ["BASELINE_VERSION", "STEPS", "Progress", "Step", "expected_version"]

BASELINE_VERSION = 1


class Progress(Protocol):
    """Where a step is. ``position`` is what the step last saved (None when it
    starts afresh); ``done`` counts the items it has handled so far."""

    position: str | None
    done: int

    async def advance(self, position: str | None, done: int) -> None:
        """Records that everything before ``position`` is done: an interrupted
        run resumes there. Steps call it after each batch of writes."""


@dataclass(frozen=True)
class Step:
    """Brings a store from ``version - 1`` to ``version``.

    ``run`` must be idempotent: a run interrupted after its last ``advance``
    repeats the writes since, and a second ``proofgate migrate`` racing the
    first repeats them all."""

    version: int
    summary: str
    run: Callable[[Storage, Progress], Awaitable[None]]


# No step yet: every store is at the baseline.
STEPS: tuple[Step, ...] = ()


def expected_version(steps: Sequence[Step]) -> int:
    for number, step in enumerate(steps, start=BASELINE_VERSION + 1):
        if step.version != number:
            raise ValueError(f"Step {step.summary!r} should bring the store to version {number}")
    return steps[-1].version if steps else BASELINE_VERSION
