"""repeat keeps background work going: a failed step is logged, never the end."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from types import SimpleNamespace

import pytest

from domain.errors import ServiceUnavailable
from services.pipeline import periodic
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
    """The second step runs (the positive control), and not before the interval."""
    interval = timedelta(milliseconds=200)
    ran = asyncio.Queue[float]()
    clock = asyncio.get_running_loop().time

    async def step() -> None:
        ran.put_nowait(clock())

    loop = asyncio.create_task(repeat(step, interval, failure="unused"))
    first = await asyncio.wait_for(ran.get(), 5)
    second = await asyncio.wait_for(ran.get(), 5)
    # asyncio may wake a timer up to its clock's resolution early.
    assert second - first >= interval.total_seconds() - 0.005
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


async def test_idle_steps_back_off_and_a_busy_one_resets_the_interval() -> None:
    """A falsy result doubles the wait up to the idle interval; a truthy one
    goes back to the base. The waits are what the loop hands asyncio.timeout."""
    results = iter([0, 0, 0, 0, 0, 1, 0])
    waits: list[float] = []
    done = asyncio.Event()
    real_timeout = asyncio.timeout

    def timeout(delay: float | None) -> asyncio.Timeout:
        waits.append(round(delay or 0.0, 3))
        return real_timeout(0)  # run the next step at once

    async def step() -> int:
        result = next(results, None)
        if result is None:
            done.set()
            await asyncio.Event().wait()
        return result or 0

    with pytest.MonkeyPatch.context() as patch:
        clock = SimpleNamespace(timeout=timeout, sleep=asyncio.sleep)
        patch.setattr(periodic, "asyncio", clock)
        loop = asyncio.create_task(
            repeat(
                step,
                timedelta(milliseconds=250),
                failure="unused",
                wake=asyncio.Event(),
                idle_interval=timedelta(seconds=2),
            )
        )
        await asyncio.wait_for(done.wait(), 5)
    loop.cancel()
    with pytest.raises(asyncio.CancelledError):
        await loop
    assert waits == [0.5, 1.0, 2.0, 2.0, 2.0, 0.25, 0.5]
