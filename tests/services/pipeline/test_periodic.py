"""repeat keeps background work going: a failed step is logged, never the end."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

import pytest

from services.pipeline.periodic import repeat

HOUR = timedelta(hours=1)


async def test_a_failed_step_is_logged_and_the_next_one_runs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    runs: list[int] = []
    third = asyncio.Event()

    async def step() -> None:
        runs.append(len(runs) + 1)
        if len(runs) == 1:
            raise RuntimeError("disk on fire")
        if len(runs) == 3:
            third.set()

    with caplog.at_level(logging.ERROR, logger="proofgate.pipeline"):
        loop = asyncio.create_task(repeat(step, timedelta(0), failure="Step failed; retrying"))
        await asyncio.wait_for(third.wait(), 5)
        loop.cancel()
        with pytest.raises(asyncio.CancelledError):
            await loop
    assert runs[:3] == [1, 2, 3]
    assert [r.message for r in caplog.records] == ["Step failed; retrying"]


async def test_wake_runs_the_next_step_before_the_interval() -> None:
    wake = asyncio.Event()
    ran = asyncio.Queue[None]()

    async def step() -> None:
        ran.put_nowait(None)

    loop = asyncio.create_task(repeat(step, HOUR, failure="unused", wake=wake))
    await asyncio.wait_for(ran.get(), 5)
    wake.set()
    await asyncio.wait_for(ran.get(), 5)
    assert not wake.is_set()
    loop.cancel()
    with pytest.raises(asyncio.CancelledError):
        await loop


async def test_without_wake_the_step_waits_for_the_interval() -> None:
    ran = asyncio.Queue[None]()

    async def step() -> None:
        ran.put_nowait(None)

    loop = asyncio.create_task(repeat(step, HOUR, failure="unused"))
    await asyncio.wait_for(ran.get(), 5)
    await asyncio.sleep(0.05)
    assert ran.empty()
    loop.cancel()
    with pytest.raises(asyncio.CancelledError):
        await loop
