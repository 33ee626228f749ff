"""What carrying alerts across processes costs, for ``proofgate explain --tail``.

The table tail reads AP12 once per watched brand per process per interval,
whether or not anything happened; with Redis the same reads happen once per
sweep instead (docs/design.md, "Alerts across processes").
"""

from __future__ import annotations

from datetime import timedelta

from services.pipeline.settings import PipelineSettings

__all__ = ["queries_per_second", "render_tail_cost"]


def queries_per_second(processes: int, brands: int, interval: timedelta) -> float:
    """AP12 Queries a second: every process reads every brand it watches once
    per interval (at worst each process watches every brand)."""
    return processes * brands / interval.total_seconds()


def render_tail_cost(processes: int, brands: int, settings: PipelineSettings) -> str:
    tail = queries_per_second(processes, brands, settings.tail_interval)
    sweep = queries_per_second(processes, brands, settings.redis_sweep_interval)
    tail_ms = settings.tail_interval.total_seconds() * 1000
    sweep_s = settings.redis_sweep_interval.total_seconds()
    overlap_s = settings.tail_overlap.total_seconds()
    return (
        f"{processes} processes x {brands} brands with live subscribers:\n"
        f"  table tail:  {tail:,.0f} AP12 Queries/s (every {tail_ms:.0f} ms, each re-reading "
        f"{overlap_s:.0f} s of alerts); cross-process latency floor {tail_ms:.0f} ms\n"
        f"  with Redis:  {sweep:,.0f} AP12 Queries/s (the {sweep_s:.0f} s sweep), "
        f"{processes * brands:,} channel subscriptions at most, one PUBLISH per alert; "
        f"latency a network round trip\n"
    )
