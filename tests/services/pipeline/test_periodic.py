"""repeat keeps background work going: a failed step is logged, never the end."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

import pytest

from domain.errors import ServiceUnavailable
from services.pipeline.periodic import FailureReport, repeat

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


async def test_a_run_of_failures_logs_one_traceback_then_a_summary_a_minute(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Each failing step advances a fake clock by 20 s: failures at 0, 20, 40,
    60, 80 and 100 s, then a success at 120 s."""
    now = [0.0]
    recovered = asyncio.Event()

    async def step() -> None:
        now[0] += 20
        if now[0] <= 120:
            raise ServiceUnavailable("DynamoDB GetItem: the table does not exist")
        recovered.set()

    report = FailureReport("Polling failed; retrying", clock=lambda: now[0])
    with caplog.at_level(logging.INFO, logger="proofgate.pipeline"):
        loop = asyncio.create_task(repeat(step, timedelta(0), failure="unused", report=report))
        await asyncio.wait_for(recovered.wait(), 5)
        loop.cancel()
        with pytest.raises(asyncio.CancelledError):
            await loop
    records = [(r.levelno, r.getMessage(), r.exc_info is not None) for r in caplog.records]
    assert records == [
        (logging.ERROR, "Polling failed; retrying", True),
        (
            logging.ERROR,
            "Polling failed; retrying: failed 3 more times in the last 60 s, still failing: "
            "ServiceUnavailable: DynamoDB GetItem: the table does not exist",
            False,
        ),
        (logging.INFO, "Polling failed; retrying: recovered after 120 s", False),
    ]


async def test_a_new_run_of_failures_after_recovery_logs_its_traceback_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    report = FailureReport("Tailing failed", clock=lambda: 0.0)
    with caplog.at_level(logging.ERROR, logger="proofgate.pipeline"):
        report.failed(RuntimeError("first"))
        report.failed(RuntimeError("repeat, within the minute"))
        report.succeeded()
        report.failed(RuntimeError("second run"))
    assert [str(r.exc_info[1]) for r in caplog.records if r.exc_info] == ["first", "second run"]
