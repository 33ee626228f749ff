from __future__ import annotations

import re
from pathlib import Path

from api.cli.explain import render_markdown
from api.graphql.fieldmap import field_map
from api.graphql.schema import schema
from storage.access_patterns import REGISTRY

ACCESS_PATTERNS_DOC = Path(__file__).parents[2] / "docs" / "access-patterns.md"


def test_access_pattern_doc_is_current() -> None:
    committed = ACCESS_PATTERNS_DOC.read_text() if ACCESS_PATTERNS_DOC.exists() else ""
    assert committed == render_markdown(REGISTRY, field_map(schema, REGISTRY)), (
        "docs/access-patterns.md is stale: the access-pattern registry or the schema's"
        " field -> AP map changed. Run `make docs`."
    )


def test_access_pattern_doc_has_one_row_per_pattern() -> None:
    ids = re.findall(r"^\| (AP\d+) \|", ACCESS_PATTERNS_DOC.read_text(), flags=re.MULTILINE)
    assert ids == [ap.id for ap in REGISTRY]
    assert len(ids) == 36
