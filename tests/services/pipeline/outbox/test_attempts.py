"""When a failed outbox item is tried again."""

from __future__ import annotations

from datetime import timedelta

from services.pipeline.outbox.attempts import retry_delay
from services.pipeline.settings import PipelineSettings


def test_retry_delay_grows_exponentially_to_its_cap() -> None:
    settings = PipelineSettings(retry_base=timedelta(seconds=1), retry_cap=timedelta(seconds=10))
    delays = [retry_delay(attempt, settings) for attempt in (1, 2, 3, 4, 5, 30)]
    lower = [timedelta(seconds=s) for s in (1, 2, 4, 8, 10, 10)]
    assert all(low <= delay <= low * 1.1 for low, delay in zip(lower, delays, strict=True))
