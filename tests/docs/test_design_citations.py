"""Comments cite the design as ``docs/design.md, <Section>``, and the section exists.

The spec the project started from is not part of the repository; a comment
that points at it, or at a section of docs/design.md that was renamed or never
written, sends the reader nowhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from tests._support.source import PACKAGES, ROOT

DESIGN = ROOT / "docs" / "design.md"
OUTSIDE_SPEC = "DESIGN" + ".md"
"""Spelled in two parts so this file does not cite it."""
CITATION = "docs/design.md"

_HEADING = re.compile(r"^## (.+?)\s*$", re.MULTILINE)
_SECTION = re.compile(r",\s*\"?([^\"\n]+)")
"""After the file name: a comma, then the section, optionally in quotes."""


def python_files() -> Iterator[Path]:
    """Source, tests and bench, but not this file, which quotes bad citations."""
    this = Path(__file__).resolve()
    for top in (*PACKAGES, "tests", "bench"):
        yield from (p for p in sorted((ROOT / top).rglob("*.py")) if p.resolve() != this)


def headings() -> set[str]:
    return set(_HEADING.findall(DESIGN.read_text()))


def bad_citations(text: str, sections: set[str]) -> list[str]:
    """Each citation of the design that names no existing section."""
    bad = []
    for match in re.finditer(re.escape(CITATION), text):
        rest = _SECTION.match(text, match.end())
        cited = rest.group(1) if rest else ""
        if not any(_starts_with_heading(cited, heading) for heading in sections):
            bad.append(text[match.start() : match.end() + 40].split("\n")[0])
    return bad


def _starts_with_heading(cited: str, heading: str) -> bool:
    return cited.startswith(heading) and not cited[len(heading) : len(heading) + 1].isalnum()


def test_the_design_has_the_sections_the_code_relies_on() -> None:
    expected = {
        "Layout",
        "Storage",
        "Cursors",
        "Certificates",
        "Provenance",
        "Threat rules",
        "Pipeline",
        "Ledger",
        "Idempotency",
        "Errors",
        "Limits and cost",
        "Performance budgets",
    }
    assert expected <= headings()


def test_the_check_tells_good_citations_from_bad() -> None:
    sections = {"Certificates", "Threat rules"}
    assert bad_citations("see docs/design.md, Certificates.", sections) == []
    assert bad_citations('See docs/design.md, "Threat rules".', sections) == []
    assert bad_citations("(docs/design.md, Threat rules and Pipeline)", sections) == []
    assert bad_citations("docs/design.md, Certificate rules", sections)
    assert bad_citations("docs/design.md, Certificatesx", sections)
    assert bad_citations("docs/design.md section 4", sections)
    assert bad_citations("see docs/design.md", sections)


def test_no_file_cites_the_spec_outside_the_repository() -> None:
    citing = [str(p.relative_to(ROOT)) for p in python_files() if OUTSIDE_SPEC in p.read_text()]
    assert not citing, f"cite docs/design.md, <Section> instead, in: {citing}"


def test_every_citation_names_an_existing_section() -> None:
    sections = headings()
    bad = {
        str(path.relative_to(ROOT)): found
        for path in python_files()
        if (found := bad_citations(path.read_text(), sections))
    }
    assert not bad, f"no such section in docs/design.md: {bad}"


def test_the_scan_sees_the_citations() -> None:
    citing = [p for p in python_files() if CITATION in p.read_text()]
    assert len(citing) >= 5
