"""``proofgate explain --tail``: the tail's reads a second, on paper."""

from __future__ import annotations

from datetime import timedelta

import pytest

from api.cli.main import main
from api.limits.tail_cost import queries_per_second


def test_the_issues_fleet_costs_two_hundred_thousand_queries_a_second() -> None:
    assert queries_per_second(50, 2000, timedelta(milliseconds=500)) == 200_000
    assert queries_per_second(50, 2000, timedelta(seconds=5)) == 20_000


def test_explain_tail_uses_the_configured_interval(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROOFGATE_TAIL_INTERVAL_MS", "250")
    assert main(["explain", "--tail", "2", "10"]) == 0
    out = capsys.readouterr().out
    assert "table tail:  80 AP12 Queries/s (every 250 ms" in out
    assert "with Redis:  4 AP12 Queries/s" in out


def test_explain_tail_refuses_no_processes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "--tail", "0", "10"]) == 2
    assert "PROCESSES >= 1" in capsys.readouterr().err
