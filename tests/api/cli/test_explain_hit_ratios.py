"""``proofgate explain --hit-ratios``: each pattern's cache hit ratio, from a
/metrics scrape of a running gateway (docs/design.md, Storage cache)."""

from __future__ import annotations

from pathlib import Path

import pytest

from api.cli.main import main
from api.observability.metrics import Metrics
from storage.cache import CacheStats


def _row(output: str, pattern: str) -> list[str]:
    """The row's last two cells: the rule and the ratio."""
    line = next(line for line in output.splitlines() if line.startswith(pattern + " "))
    return line.split()[-2:]


def test_the_ratio_of_each_pattern_read_is_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    metrics, stats = Metrics(), CacheStats()
    metrics.cache.watch(stats, lambda: 0, lambda: True)
    stats.hits["AP07"], stats.misses["AP07"] = 3, 1
    stats.misses["AP01"] = 2
    scrape = tmp_path / "scrape.txt"
    scrape.write_bytes(metrics.render())
    assert main(["explain", "--hit-ratios", str(scrape)]) == 0
    output = capsys.readouterr().out
    assert "hit ratio" in output.splitlines()[0]
    assert _row(output, "AP07") == ["cached", "75.0%"]
    assert _row(output, "AP01") == ["cached", "0.0%"]
    assert _row(output, "AP20") == ["strong", "-"]


def test_a_missing_scrape_is_one_line_with_a_hint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["explain", "--hit-ratios", str(tmp_path / "none.txt")]) == 2
    error = capsys.readouterr().err
    assert error.startswith("proofgate: error: cannot read") and "hint:" in error
