"""The API section's verdicts: each budget is judged on the median of the
rounds, and the tail budget on ours alone (docs/design.md, Performance budgets)."""

from __future__ import annotations

import pytest

from bench._wrk import WrkResult
from bench.api import BASELINES, SHAPES, TAIL, _summaries, _verdicts


def _round(per_second: float, p50: float, p99: float) -> WrkResult:
    return WrkResult(requests=1000, per_second=per_second, p50_ms=p50, p99_ms=p99, errors=0)


def _collected(ours_p99: tuple[float, float, float]) -> dict[tuple[str, str], list[WrkResult]]:
    collected = {}
    for shape in SHAPES:
        collected[(shape, "ours")] = [_round(300, 10, p99) for p99 in ours_p99]
        collected[(shape, BASELINES[shape])] = [_round(100, 10, 30) for _ in ours_p99]
    return collected


def test_the_tail_is_the_median_rounds_p99_over_p50_of_ours() -> None:
    summaries = _summaries(_collected((15, 25, 60)))

    assert {s.ours_tail for s in summaries.values()} == {2.5}
    assert {s.ratio for s in summaries.values()} == {3.0}


@pytest.mark.parametrize(("p99", "verdict"), [((15, 19, 60), "ok  "), ((15, 21, 60), "MISS")])
def test_a_tail_past_the_budget_is_reported_missed(
    p99: tuple[float, float, float], verdict: str, capsys: pytest.CaptureFixture[str]
) -> None:
    traces = {shape: {"calls": []} for shape in ("products page of 50", "verifyProduct")}

    _verdicts(_summaries(_collected(p99)), traces)

    lines = [line for line in capsys.readouterr().out.splitlines() if "tail" in line]
    assert len(lines) == len(SHAPES)
    assert all(line.strip().startswith(verdict.strip()) for line in lines), lines
    assert all(f"p99 / p50 <= {TAIL:.0f}" in line for line in lines)
