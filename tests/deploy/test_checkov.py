"""checkov over deploy/: nothing fails that deploy/checkov.yaml does not name
and justify, and a planted regression is caught.

checkov lives in a venv of its own (`make test` builds it from
requirements-checkov.lock: its pins clash with the dev extras'). It runs
with --skip-download, so it reaches nothing; one run takes about 4 s.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]

from tests._support.source import ROOT
from tests.deploy._templates import DEPLOY

CHECKOV = ROOT / ".venv" / "checkov" / "bin" / "checkov"
CONFIG = DEPLOY / "checkov.yaml"


def checkov(directory: Path, config: Path = CONFIG) -> dict[str, Any]:
    if not CHECKOV.exists():
        pytest.fail("checkov is not installed: run `make .venv/checkov/.installed`")
    result = subprocess.run(
        [str(CHECKOV), "--config-file", str(config), "-d", str(directory), "-o", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "BC_SKIP_MAPPING": "TRUE"},
        check=False,
    )
    assert result.returncode in (0, 1), result.stderr[-2000:]
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def failed(report: dict[str, Any]) -> set[str]:
    if "results" not in report:  # no failure and nothing to list
        return set()
    return {check["check_id"] for check in report["results"]["failed_checks"]}


def skips(text: str) -> dict[str, list[str]]:
    """Each skipped check with the comment lines just above it."""
    justified: dict[str, list[str]] = {}
    comment: list[str] = []
    for line in text.split("skip-check:", 1)[1].splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            comment.append(stripped.lstrip("# "))
        elif match := re.fullmatch(r"- (CKV2?_[A-Z0-9_]+)", stripped):
            justified[match[1]] = comment
            comment = []
    return justified


def test_checkov_fails_nothing_it_was_not_told_about() -> None:
    report = checkov(DEPLOY)
    assert report["summary"]["parsing_errors"] == 0
    assert report["summary"]["passed"] > 40
    assert failed(report) == set()


def test_every_skip_is_named_and_justified_in_one_file() -> None:
    text = CONFIG.read_text()
    justified = skips(text)
    assert set(justified) == set(yaml.safe_load(text)["skip-check"])
    assert all(len(" ".join(lines).split()) >= 12 for lines in justified.values()), justified
    for template in DEPLOY.glob("*.yaml"):
        assert "checkov" not in template.read_text() or template == CONFIG, template


def test_a_planted_regression_is_caught(tmp_path: Path) -> None:
    """No AUTH token, no access logs, and one skip dropped: each fails."""
    planted = tmp_path / "deploy"
    planted.mkdir()
    for template in ("service.yaml", "table.yaml"):
        shutil.copy(DEPLOY / template, planted)
    service = planted / "service.yaml"
    text = service.read_text()
    token = (
        "      AuthToken:\n"
        '        Fn::Sub: "{{resolve:secretsmanager:${RedisAuthToken}:SecretString}}"\n'
    )
    assert token in text and 'access_logs.s3.enabled\n          Value: "true"' in text
    service.write_text(
        text.replace(token, "").replace(
            'access_logs.s3.enabled\n          Value: "true"',
            'access_logs.s3.enabled\n          Value: "false"',
        )
    )
    config = tmp_path / "checkov.yaml"
    config.write_text(CONFIG.read_text().replace("  - CKV_AWS_260\n", ""))
    report = checkov(planted, config)
    assert report["summary"]["parsing_errors"] == 0
    assert failed(report) == {"CKV_AWS_31", "CKV_AWS_91", "CKV_AWS_260"}
