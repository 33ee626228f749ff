"""Every file or directory the design names in backquotes exists, so a move that
forgets the design's map (the "Start here" section above all) fails here instead
of misleading the next reader."""

from __future__ import annotations

import re
from pathlib import Path

from tests._support.source import PACKAGES, ROOT

DESIGN = ROOT / "docs" / "design.md"
TOP_LEVEL = (*PACKAGES, "tests", "bench", "deploy", "docs")
NAMED = re.compile(r"`((?:" + "|".join(TOP_LEVEL) + r")/[\w./-]*)`")


def missing_paths(text: str, root: Path) -> list[str]:
    """Backquoted repository paths in ``text`` that ``root`` does not hold."""
    return sorted({path for path in NAMED.findall(text) if not (root / path).exists()})


def test_the_design_names_only_paths_that_exist() -> None:
    text = DESIGN.read_text(encoding="utf-8")
    assert len(NAMED.findall(text)) > 50, "the check sees the design's paths"
    assert missing_paths(text, ROOT) == []


def test_a_path_that_moved_is_reported() -> None:
    text = "The view (`api/graphql/view.py`) and the old one (`api/graphql.py`), `api/ws/`."
    assert missing_paths(text, ROOT) == ["api/graphql.py"]
