"""The README's Settings tables list exactly the variables the code reads."""

from __future__ import annotations

import re

from tests._support.source import ROOT, source_files

README = ROOT / "README.md"

_NAME = re.compile(r"PROOFGATE_[A-Z0-9_]+")
"""A trailing underscore is a family (``PROOFGATE_THREAT_*``), not a variable."""
_ROW = re.compile(r"^\| `(PROOFGATE_[A-Z0-9_]+)` \|", re.MULTILINE)


def source_variables() -> set[str]:
    return {
        name
        for path in source_files()
        for name in _NAME.findall(path.read_text())
        if not name.endswith("_")
    }


def documented_variables() -> list[str]:
    return _ROW.findall(README.read_text())


def test_the_scan_sees_the_code() -> None:
    found = source_variables()
    assert {"PROOFGATE_ADMIN_KEY", "PROOFGATE_REGISTRATION_FEE", "PROOFGATE_KEY_CHECK_MS"} <= found
    assert len(documented_variables()) >= 40


def test_every_variable_in_the_code_is_in_the_readme() -> None:
    missing = source_variables() - set(documented_variables())
    assert not missing, f"add a row to README.md's Settings tables for: {sorted(missing)}"


def test_every_variable_in_the_readme_is_read_by_the_code() -> None:
    stale = set(documented_variables()) - source_variables()
    assert not stale, f"README.md documents variables the code never reads: {sorted(stale)}"


def test_each_variable_has_one_row() -> None:
    documented = documented_variables()
    assert len(documented) == len(set(documented))
