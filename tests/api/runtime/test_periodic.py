"""``every``: a duty on a clock that survives its own failures."""

from __future__ import annotations

import asyncio

import pytest

from api.runtime.periodic import every


async def test_a_failing_duty_is_logged_and_runs_again(caplog: pytest.LogCaptureFixture) -> None:
    runs = 0
    third = asyncio.Event()

    async def duty() -> None:
        nonlocal runs
        runs += 1
        if runs == 3:
            third.set()
        if runs == 1:
            raise RuntimeError("the first run fails")

    async with every(0.001, duty, "The duty failed"):
        await asyncio.wait_for(third.wait(), 5)
    assert [r.getMessage() for r in caplog.records if r.name == "proofgate.runtime"] == [
        "The duty failed"
    ]


async def test_leaving_the_block_stops_the_duty() -> None:
    runs = 0
    ran = asyncio.Event()

    async def duty() -> None:
        nonlocal runs
        runs += 1
        ran.set()

    async with every(0.001, duty, "The duty failed"):
        await asyncio.wait_for(ran.wait(), 5)
    stopped_at = runs
    # The positive control: the same wait inside the block saw runs happen.
    for _ in range(20):
        await asyncio.sleep(0.001)
    assert runs == stopped_at
