"""``proofgate capacity``: units per operation, the table's load for a mix,
the hottest partition against DynamoDB's limits, and costs only from prices
given on the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from api.cli.capacity import installed_profile
from api.cli.main import main
from api.observability.metrics import Metrics
from storage.cache import CacheStats
from tests._support.source import ROOT

PROFILE = {
    "source": "test",
    "operations": {
        "page": [
            {"accessPattern": "AP01", "operation": "GetItem", "capacityUnits": 0.5},
            {"accessPattern": "AP07", "operation": "Query", "capacityUnits": 5.0},
        ],
        "verifyProduct": [
            {"accessPattern": "AP05", "operation": "GetItem", "capacityUnits": 0.5},
            {"accessPattern": "AP04", "operation": "GetItem", "capacityUnits": 0.5},
            {"accessPattern": "AP09", "operation": "Query", "capacityUnits": 0.5},
            {"accessPattern": "AP11", "operation": "GetItem", "capacityUnits": 1.0},
            {"accessPattern": None, "operation": "TransactWriteItems", "capacityUnits": 8.0},
            {"accessPattern": "AP01", "operation": "GetItem", "capacityUnits": 0.5},
        ],
    },
}


@pytest.fixture
def profile(tmp_path: Path) -> Path:
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(PROFILE))
    return path


def test_a_mix_gives_the_table_load_and_the_hottest_partition(
    profile: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["capacity", "--profile", str(profile), "--mix", "page=100", "verifyProduct=10"])

    out = capsys.readouterr().out
    assert code == 0
    assert "page                 2         5.5            0" in out
    assert "verifyProduct        6           3            8" in out
    assert "table: 580.0 read units/s, 80.0 write units/s" in out
    # AP07 reads one brand's GSI1 partition: 100/s x 5 units; AP01 the table's.
    assert "  GSI1 BRAND#{brand_id}: 500.0 read units/s, 16.7% of 3,000" in out
    assert "  TABLE BRAND#{brand_id}: 55.0 read units/s, 1.8% of 3,000" in out
    assert "8.0% of one partition's 1,000" in out
    assert "give --read-price and --write-price" in out


def test_costs_come_from_the_prices_given(
    profile: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(
        [
            "capacity", "--profile", str(profile), "--mix", "page=100",
            "--read-price", "0.25", "--write-price", "1.25",
        ]
    )  # fmt: skip

    out = capsys.readouterr().out
    assert "page                 2         5.5            0           1.38" in out
    assert "verifyProduct        6           3            8          10.75" in out
    # 550 read units/s x 0.25 per million x 3,600 s
    assert "on demand: 0.4950 per hour at the given prices" in out


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--mix", "search=5"], "no operation 'search' in the profile"),
        (["--mix", "page=fast"], "'fast' is not operations per second"),
        (["--read-price", "0.25"], "Give both --read-price and --write-price"),
    ],
)
def test_mistakes_are_one_line_with_a_hint(
    profile: Path, capsys: pytest.CaptureFixture[str], arguments: list[str], message: str
) -> None:
    assert main(["capacity", "--profile", str(profile), *arguments]) == 1
    err = capsys.readouterr().err
    assert message in err and "proofgate: hint:" in err and "Traceback" not in err


def test_a_missing_profile_says_what_to_do_without_naming_the_benchmark(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The wheel ships no bench package: the hint names what an installed
    proofgate has (its own profile), and `make bench` for a checkout."""
    assert main(["capacity", "--profile", str(tmp_path / "none.json")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and "Traceback" not in err
    assert "python -m bench" not in err and "Leave out --profile" in err


def test_a_directory_as_profile_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["capacity", "--profile", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "Cannot read" in err and "Traceback" not in err


def test_the_profile_comes_from_the_installed_package_in_any_directory(tmp_path: Path) -> None:
    """Run as an operator would, from a directory with no docs/ beside it."""
    result = subprocess.run(
        [sys.executable, "-m", "api.cli.main", "capacity", "--mix", "page=10"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "page" in result.stdout and "units" in result.stdout
    assert installed_profile() == (ROOT / "api" / "cli" / "capacity-profile.json").read_text()


def test_measured_hit_ratios_discount_each_patterns_reads(
    profile: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/design.md, Storage cache: the ratios a running gateway's /metrics
    counts (as `proofgate explain --hit-ratios` reads them), applied per
    pattern; one given on the command line wins over the scrape's."""
    metrics, stats = Metrics(), CacheStats()
    metrics.cache.watch(stats, lambda: 0, lambda: True)
    stats.hits["AP07"], stats.misses["AP07"] = 19, 1  # 95%
    stats.hits["AP01"], stats.misses["AP01"] = 1, 1  # 50%, overridden below
    scrape = tmp_path / "scrape.txt"
    scrape.write_bytes(metrics.render())
    args = ["capacity", "--profile", str(profile), "--mix", "page=100", "verifyProduct=10"]
    code = main([*args, "--hit-ratios", str(scrape), "--hit-ratio", "AP01=0.9"])
    out = capsys.readouterr().out
    assert code == 0
    assert "cache hit ratios applied to reads: AP01 90.0%, AP07 95.0%" in out
    # page: AP01 0.5 x 0.1 + AP07 5 x 0.05; 0.1 + 0.05 calls reach the store.
    assert "page              0.15         0.3            0" in out
    # verifyProduct: AP01 0.5 x 0.1, the rest as measured (AP05 has no ratio).
    assert "verifyProduct      5.1        2.55            8" in out
    assert "table: 55.5 read units/s, 80.0 write units/s" in out
    assert "  GSI1 BRAND#{brand_id}: 25.0 read units/s" in out


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("AP99=0.5", "no access pattern 'AP99'"),
        ("AP20=0.5", "never serves AP20 (strong)"),
        ("AP07=1.5", "not a ratio between 0 and 1"),
        ("AP07=most", "not a ratio between 0 and 1"),
    ],
)
def test_a_bad_hit_ratio_is_one_line_with_a_hint(
    profile: Path, given: str, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["capacity", "--profile", str(profile), "--hit-ratio", given]) == 1
    error = capsys.readouterr().err.splitlines()
    assert says in error[0] and error[1].startswith("proofgate: hint:")


def test_an_unreadable_scrape_is_one_line_with_a_hint(
    profile: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = str(tmp_path / "none.txt")
    assert main(["capacity", "--profile", str(profile), "--hit-ratios", missing]) == 1
    error = capsys.readouterr().err.splitlines()
    assert "cannot read" in error[0] and "curl" in error[1]
