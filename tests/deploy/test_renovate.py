"""renovate.json still reaches what it is meant to move: every lock, the
Dockerfile's base digest and the collector's digest in service.yaml.

Renovate's patterns are JavaScript regular expressions; the ones used here
are also Python's once `(?<name>` is spelled `(?P<name>`.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests._support.source import ROOT
from tests.deploy.test_lock import LOCKS

CONFIG = ROOT / "renovate.json"


@pytest.fixture(scope="module")
def config() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(CONFIG.read_text())
    return loaded


def file_pattern(text: str) -> re.Pattern[str]:
    assert text.startswith("/") and text.endswith("/"), text
    return re.compile(text[1:-1])


def python_regex(text: str) -> re.Pattern[str]:
    return re.compile(text.replace("(?<", "(?P<"))


def test_every_lock_is_refreshed_on_a_schedule(config: dict[str, Any]) -> None:
    assert "pip-compile" in config["enabledManagers"]
    patterns = [file_pattern(p) for p in config["pip-compile"]["managerFilePatterns"]]
    for name in LOCKS:
        assert any(p.search(name) for p in patterns), name
    assert not any(p.search("pyproject.toml") for p in patterns)
    assert config["lockFileMaintenance"]["enabled"] is True
    assert config["lockFileMaintenance"]["schedule"]


def test_the_base_image_digest_moves_and_its_version_does_not(config: dict[str, Any]) -> None:
    assert "dockerfile" in config["enabledManagers"]
    (held,) = [
        rule for rule in config["packageRules"] if rule.get("matchPackageNames") == ["python"]
    ]
    assert held["enabled"] is False
    assert "digest" not in held["matchUpdateTypes"]
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text()
    assert re.search(r"^ARG BASE=python:3\.11-slim-bookworm@sha256:[0-9a-f]{64}$", dockerfile, re.M)


def test_the_collector_digest_is_found(config: dict[str, Any]) -> None:
    (manager,) = config["customManagers"]
    (pattern,) = [file_pattern(p) for p in manager["managerFilePatterns"]]
    assert pattern.search("deploy/service.yaml")
    (match_string,) = manager["matchStrings"]
    found = python_regex(match_string).search((ROOT / "deploy" / "service.yaml").read_text())
    assert found is not None
    assert found["currentValue"].startswith("v")
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", found["currentDigest"])
    tag_only = "Default: public.ecr.aws/aws-observability/aws-otel-collector:v0.43.3\n"
    assert python_regex(match_string).search(tag_only) is None
