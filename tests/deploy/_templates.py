"""Reading deploy/*.yaml: parsed templates, cfn-lint offline, the Guard rules."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]
from cfn_guard_rs.api import run_checks
from cfnlint.api import ManualArgs, lint_file  # type: ignore[import-untyped]

from api.settings.gateway import Settings
from tests._support.source import ROOT

DEPLOY = ROOT / "deploy"
TEMPLATES = sorted(DEPLOY.glob("*.yaml"))
RULES = DEPLOY / "rules.guard"


def load(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(path.read_text())
    return loaded


def resources(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {
        name: resource
        for name, resource in template["Resources"].items()
        if resource["Type"] == kind
    }


@contextmanager
def offline() -> Iterator[None]:
    """cfn-lint ships its resource schemas; fail loudly if it ever reaches out."""
    connect = socket.socket.connect

    def local_only(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in (
            "127.0.0.1",
            "::1",
        ):
            raise AssertionError(f"cfn-lint tried to connect to {address}")
        return connect(self, address)

    socket.socket.connect = local_only  # type: ignore[method-assign, assignment]
    try:
        yield
    finally:
        socket.socket.connect = connect  # type: ignore[method-assign]


def lint(path: Path) -> list[str]:
    with offline():
        matches = lint_file(path, config=ManualArgs(regions=["us-east-1"], include_checks=["I"]))
    return [f"{m.rule.id} line {m.linenumber}: {m.message}" for m in matches]


def guard(template: dict[str, Any]) -> list[str]:
    """The names of the rules of deploy/rules.guard that ``template`` breaks."""
    report = run_checks(template, RULES.read_text())
    return sorted({clause.Rule.name for clause in report.not_compliant if clause.Rule})


def setting_default(name: str) -> int:
    """What the gateway uses when its variable is unset."""
    value = next(field.default for field in fields(Settings) if field.name == name)
    assert isinstance(value, int)
    return value
