"""The README's Settings tables list exactly the variables the code reads.

What the code reads is what the one reader declares (``Environment``); a
``PROOFGATE_*`` name anywhere else in the source must be one of those, so no
module reads a variable behind the reader's back."""

from __future__ import annotations

import re

from api.settings.gateway import Environment
from tests._support.source import ROOT, source_files

README = ROOT / "README.md"

_NAME = re.compile(r"PROOFGATE_[A-Z0-9_]+")
"""A trailing underscore is a family (``PROOFGATE_THREAT_*``), not a variable."""
_ROW = re.compile(r"^\| `(PROOFGATE_[A-Z0-9_]+)` \|", re.MULTILINE)


def source_mentions() -> set[str]:
    return {
        name
        for path in source_files()
        for name in _NAME.findall(path.read_text())
        if not name.endswith("_")
    }


def documented_variables() -> list[str]:
    return _ROW.findall(README.read_text())


def test_the_scans_see_the_code() -> None:
    assert {"PROOFGATE_ADMIN_KEY", "PROOFGATE_SIGNING_KEY_FILE"} <= source_mentions()
    assert {"PROOFGATE_REGISTRATION_FEE", "PROOFGATE_KEY_CHECK_MS"} <= set(Environment.variables())
    assert len(documented_variables()) >= 40


def test_every_variable_read_is_in_the_readme() -> None:
    missing = set(Environment.variables()) - set(documented_variables())
    assert not missing, f"add a row to README.md's Settings tables for: {sorted(missing)}"


def test_every_variable_in_the_readme_is_read() -> None:
    stale = set(documented_variables()) - set(Environment.variables())
    assert not stale, f"README.md documents variables the code never reads: {sorted(stale)}"


def test_the_source_names_no_variable_the_reader_does_not_declare() -> None:
    unread = source_mentions() - set(Environment.variables())
    assert not unread, f"read these through api.settings.gateway.Environment: {sorted(unread)}"


def test_each_variable_has_one_row() -> None:
    documented = documented_variables()
    assert len(documented) == len(set(documented))
