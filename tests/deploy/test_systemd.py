"""deploy/proofgate.service: a hardened unit that systemd itself accepts."""

from __future__ import annotations

import configparser
import shutil
import subprocess
from pathlib import Path

import pytest

from tests._support.source import ROOT, venv_script
from tests.deploy._templates import setting_default

UNIT = ROOT / "deploy" / "proofgate.service"
EXEC = "/opt/proofgate/bin/proofgate"


def service_section() -> dict[str, list[str]]:
    """Every ``key=value`` of [Service]; systemd allows a key several times."""
    values: dict[str, list[str]] = {}
    section = ""
    for raw in UNIT.read_text().splitlines():
        line = raw.strip()
        if line.startswith("["):
            section = line
        elif section == "[Service]" and "=" in line and not line.startswith("#"):
            key, _, value = line.partition("=")
            values.setdefault(key, []).append(value)
    return values


def verify(unit: Path) -> subprocess.CompletedProcess[str]:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed")
    return subprocess.run(
        [analyze, "verify", "--man=no", str(unit)], capture_output=True, text=True, timeout=60
    )


def test_systemd_accepts_the_unit(tmp_path: Path) -> None:
    """Verified with ExecStart pointed at this venv's ``proofgate``: systemd
    checks that the binary exists."""
    executable = venv_script("proofgate")
    assert executable is not None
    unit = tmp_path / "proofgate.service"
    unit.write_text(UNIT.read_text().replace(EXEC, str(executable)))
    result = verify(unit)
    assert result.returncode == 0 and result.stderr == "", result.stderr


def test_systemd_analyze_does_reject_a_bad_unit(tmp_path: Path) -> None:
    unit = tmp_path / "bad.service"
    unit.write_text("[Service]\nExecStart=/nonexistent/proofgate\nNoSuchKey=1\n")
    result = verify(unit)
    assert result.returncode != 0 and "NoSuchKey" in result.stderr


def test_the_unit_is_hardened() -> None:
    service = service_section()
    expected = {
        "DynamicUser": "yes",
        "NoNewPrivileges": "yes",
        "ProtectSystem": "strict",
        "ProtectHome": "yes",
        "PrivateTmp": "yes",
        "PrivateDevices": "yes",
        "RestrictAddressFamilies": "AF_INET AF_INET6 AF_UNIX",
        "CapabilityBoundingSet": "",
    }
    assert {key: service.get(key, [None])[-1] for key in expected} == expected
    assert service["ExecStart"] == [f"{EXEC} serve"]
    assert service["StateDirectory"] == ["proofgate"]


def test_configparser_reads_the_unit() -> None:
    """No stray syntax: every line is a section, a comment or key=value."""
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(UNIT.read_text())
    assert set(parser.sections()) == {"Unit", "Service", "Install"}


def test_the_unit_can_sit_behind_a_load_balancer() -> None:
    """It binds every interface, stops after the drain, and holds more files
    than the connections it accepts."""
    service = service_section()
    stop = service["TimeoutStopSec"][-1]
    assert stop.endswith("s") and int(stop.removesuffix("s")) > setting_default("shutdown_seconds")
    assert "PROOFGATE_HOST=0.0.0.0" in service["Environment"]
    assert int(service["LimitNOFILE"][-1]) > setting_default("max_connections")
