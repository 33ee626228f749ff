"""The field -> access-pattern map, read from the schema's own metadata.

Every field that touches storage declares its one AP (``ap_field``,
``mutation_field(reads=...)``, see ``resolvers.fields``), so this
map is the code, not a description of it: ``proofgate explain`` prints it and
docs/access-patterns.md carries it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import strawberry

from resolvers.fields import field_access_patterns
from storage.registry import AccessPattern

__all__ = ["FIELD_COLUMNS", "FieldRow", "field_map", "render_field_markdown", "render_field_text"]

FIELD_COLUMNS = ("field", "AP", "name", "then loads", "writes")
ROOT_TYPES = ("Query", "Mutation", "Subscription")

_FIELD_PREAMBLE = """\
## Field map

Generated from the schema's field metadata. Each field that reads storage
declares the one access pattern it runs; a field that finds its entities
through an index or a lookup item also names, under "then loads", the get
pattern whose DataLoader fetches them in one batch. A mutation names the
pattern it reads before writing, if any. Fields not listed are computed from
their parent object and read nothing.
"""


@dataclass(frozen=True)
class FieldRow:
    field: str
    """``Type.field``, by GraphQL names."""
    reads: AccessPattern | None
    loads: AccessPattern | None = None
    writes: bool = False

    def cells(self) -> tuple[str, ...]:
        return (
            self.field,
            self.reads.id if self.reads else "-",
            self.reads.name if self.reads else "-",
            f"{self.loads.id} {self.loads.name}" if self.loads else "-",
            "yes" if self.writes else "-",
        )


def field_map(schema: strawberry.Schema, patterns: Iterable[AccessPattern]) -> tuple[FieldRow, ...]:
    """The fields that touch storage: root types first, then the others by name."""
    by_id = {pattern.id: pattern for pattern in patterns}
    rows: list[tuple[tuple[int, str], int, FieldRow]] = []
    for position, access in enumerate(field_access_patterns(schema)):
        root = access.type_name in ROOT_TYPES
        rank = ROOT_TYPES.index(access.type_name) if root else len(ROOT_TYPES)
        field = f"{access.type_name}.{access.field_name}"
        # node(id:): one row per type the global id may name, with its get pattern.
        for type_name, pattern in access.by_type:
            row = FieldRow(f"{field} ({type_name})", by_id[pattern])
            rows.append(((rank, access.type_name), position, row))
        if access.access_pattern is None and not access.writes:
            continue
        row = FieldRow(
            field,
            by_id[access.access_pattern] if access.access_pattern else None,
            by_id[access.loads] if access.loads else None,
            access.writes,
        )
        rows.append(((rank, access.type_name), position, row))
    return tuple(row for *_, row in sorted(rows, key=lambda entry: entry[:2]))


def render_field_text(rows: Sequence[FieldRow]) -> str:
    table = [FIELD_COLUMNS, *(row.cells() for row in rows)]
    widths = [max(len(cells[i]) for cells in table) for i in range(len(FIELD_COLUMNS))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(cells, widths, strict=True)).rstrip()
        for cells in table
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines) + "\n"


def render_field_markdown(rows: Sequence[FieldRow]) -> str:
    lines = [
        _FIELD_PREAMBLE,
        "| " + " | ".join(FIELD_COLUMNS) + " |",
        "|" + "|".join(" --- " for _ in FIELD_COLUMNS) + "|",
    ]
    for row in rows:
        field, *rest = (cell.replace("|", "\\|") for cell in row.cells())
        lines.append("| " + " | ".join([f"`{field}`", *rest]) + " |")
    return "\n".join(lines) + "\n"
