"""Store versions on both backends: the start-up check, and a fake version-2
step run, interrupted, resumed and run again."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from domain.errors import ConfigurationError
from services.migrations import (
    StoreState,
    migrate,
    plan,
    read_state,
    require_current,
    stamp_new_store,
)
from services.migrations.state import version_item
from storage import Put, Storage
from tests._support.migrations import FakeStep, Interrupted, shapes, write_brand_entries


async def test_a_store_without_a_version_is_at_the_baseline(storage: Storage) -> None:
    assert await read_state(storage) == StoreState(1, recorded=False)
    assert await require_current(storage, ()) == StoreState(1, recorded=False)
    with pytest.raises(ConfigurationError) as refused:
        await require_current(storage, (FakeStep().step(),))
    assert refused.value.message == "The store is at version 1; this build expects version 2"
    assert "proofgate migrate" in (refused.value.hint or "")


async def test_a_new_store_is_stamped_with_the_builds_version(storage: Storage) -> None:
    steps = (FakeStep().step(),)
    await stamp_new_store(storage, steps)
    await stamp_new_store(storage, ())  # a second stamp changes nothing
    assert await read_state(storage) == StoreState(2)
    assert await require_current(storage, steps) == StoreState(2)


async def test_a_newer_store_is_refused_with_the_way_forward(storage: Storage) -> None:
    await storage.transact_write([Put(version_item(3, datetime.now(UTC)))])
    with pytest.raises(ConfigurationError) as refused:
        await require_current(storage, ())
    assert refused.value.message == (
        "The store is at version 3, newer than this build (which reads version 1)"
    )
    assert (refused.value.hint or "").startswith("Upgrade proofgate to a build")
    with pytest.raises(ConfigurationError) as planning:
        await plan(storage, (FakeStep().step(),))
    assert "version 3, newer than this build (which reads version 2)" in planning.value.message
    assert await read_state(storage) == StoreState(3)


async def test_an_interrupted_step_resumes_where_it_stopped(storage: Storage) -> None:
    keys = await write_brand_entries(storage, 5)
    fake = FakeStep(fail_after_pages=1)
    steps = (fake.step(),)
    lines: list[str] = []

    with pytest.raises(Interrupted):
        await migrate(storage, steps, lines.append)
    state = await read_state(storage)
    assert (state.version, state.migrating_to, state.done) == (1, 2, 2)
    assert sum(fake.rewritten.values()) == 2
    with pytest.raises(ConfigurationError) as refused:
        await require_current(storage, steps)
    assert "did not finish (2 items done)" in refused.value.message
    planned = await plan(storage, steps)
    assert "to version 2: give every brand index entry shape 2 (resumes after 2 items)" in (
        planned.render()
    )

    await migrate(storage, steps, lines.append)
    assert fake.rewritten == {key: 1 for key in keys}, "each entry rewritten once across runs"
    assert await shapes(storage) == {key: 2 for key in keys}
    assert await read_state(storage) == StoreState(2)
    assert await require_current(storage, steps) == StoreState(2)
    assert lines[0] == "  to version 2: 2 items done"
    assert "  to version 2: resuming after 2 items" in lines
    assert lines[-1] == "  to version 2: done (5 items)"


async def test_migrating_a_current_store_changes_nothing(storage: Storage) -> None:
    await write_brand_entries(storage, 3)
    fake = FakeStep()
    steps = (fake.step(),)
    await migrate(storage, steps, print)
    assert sum(fake.rewritten.values()) == 3
    lines: list[str] = []
    again = await migrate(storage, steps, lines.append)
    assert again.pending == ()
    assert again.render() == "The store is at version 2, as this build expects: nothing to do."
    assert lines == [] and sum(fake.rewritten.values()) == 3


async def test_an_unrecorded_current_store_is_not_written(storage: Storage) -> None:
    """``proofgate migrate`` on a store at the baseline with a baseline build
    is a no-op: not even the version item is written."""
    assert (await migrate(storage, (), print)).pending == ()
    assert await read_state(storage) == StoreState(1, recorded=False)
