from __future__ import annotations

import re

import pytest

from api.cli.explain import render_markdown
from api.cli.main import main
from api.graphql.fieldmap import FIELD_COLUMNS, ROOT_TYPES, field_map
from api.graphql.schema import schema
from resolvers.fields import field_access_patterns
from storage.access_patterns import REGISTRY

ROWS = field_map(schema, REGISTRY)
BY_FIELD = {row.field: row for row in ROWS}


def test_every_field_that_touches_storage_is_in_the_map() -> None:
    declared = {
        f"{a.type_name}.{a.field_name}": a
        for a in field_access_patterns(schema)
        if a.access_pattern or a.writes
    }
    by_type = {
        f"{a.type_name}.{a.field_name} ({type_name})": pattern
        for a in field_access_patterns(schema)
        for type_name, pattern in a.by_type
    }
    assert set(BY_FIELD) == set(declared) | set(by_type)
    assert len(ROWS) == len(BY_FIELD)
    for name, access in declared.items():
        row = BY_FIELD[name]
        assert (row.reads.id if row.reads else None) == access.access_pattern
        assert (row.loads.id if row.loads else None) == access.loads
        assert row.writes == access.writes
    for name, pattern in by_type.items():
        row = BY_FIELD[name]
        assert row.reads is not None and row.reads.id == pattern
    assert BY_FIELD["Query.node (Product)"].reads == REGISTRY["AP04"]


def test_rows_name_the_pattern_and_what_an_index_read_loads() -> None:
    brands = BY_FIELD["Query.brands"]
    assert brands.reads is not None
    assert brands.cells() == ("Query.brands", "AP02", brands.reads.name, "AP01 brand by id", "-")
    assert BY_FIELD["Mutation.verifyProduct"].writes
    assert "Product.certificate" not in BY_FIELD, "computed from its parent"


def test_root_types_come_first_in_order() -> None:
    kinds = [row.field.split(".")[0] for row in ROWS]
    roots = [kind for kind in kinds if kind in ROOT_TYPES]
    assert kinds[: len(roots)] == roots
    assert roots == sorted(roots, key=ROOT_TYPES.index)
    others = kinds[len(roots) :]
    assert others == sorted(others)


def test_explain_prints_the_field_map(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain"]) == 0
    _, fields = capsys.readouterr().out.split("\n\n")
    assert fields.splitlines()[0].split() == ["field", "AP", "name", "then", "loads", "writes"]
    lines = {re.split(r"\s{2,}", line)[0]: line for line in fields.splitlines()[2:]}
    assert list(lines) == [row.field for row in ROWS]
    assert re.search(
        r"^Query\.brands\s+AP02\s+list brands.*AP01 brand by id", lines["Query.brands"]
    )


def test_the_markdown_doc_has_a_field_map_section() -> None:
    doc = render_markdown(REGISTRY, ROWS)
    _, section = doc.split("## Field map\n")
    assert "| " + " | ".join(FIELD_COLUMNS) + " |" in section
    rows = re.findall(r"^\| `([A-Za-z]+\.[A-Za-z]+(?: \([A-Za-z]+\))?)` \|", section, flags=re.M)
    assert rows == [row.field for row in ROWS]
    assert render_markdown(REGISTRY) == doc.split("\n## Field map\n")[0]
