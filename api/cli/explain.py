"""Renders the access-pattern registry for people: ``proofgate explain``.

docs/access-patterns.md is exactly ``render_markdown(REGISTRY, field_map(...))``
(the registry, then the schema's field map); a test regenerates it and fails
when the committed file is stale.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from api.graphql.fieldmap import FieldRow, render_field_markdown, render_field_text
from storage.cache import rule_of
from storage.registry import AccessPattern, Operation, SortCondition, SortOperator

__all__ = ["COLUMNS", "render_markdown", "render_text"]

COLUMNS = (
    "AP",
    "name",
    "operation",
    "index",
    "partition key",
    "sort key",
    "direction",
    "consistency",
    "max page",
    "entity",
    "cache",
)
HIT_RATIO = "hit ratio"

_NOT_PAGED = "-"

_PREAMBLE = """\
# Access patterns

Generated from `storage/access_patterns.py` and the schema by
`proofgate explain --markdown`; do not edit by hand, run `make docs`.

Every read the gateway makes is one of these. A `get` pattern is a GetItem, or
one BatchGetItem when several keys are read together; a `query` pattern is a
Query on the table or a global secondary index. There is no Scan. Direction and
page size apply to queries only. The cache column is the pattern's rule in
the storage cache (docs/design.md, Storage cache): `cached` and `freshness`
patterns may be served from it, every other rule passes through to the store.
"""


def _row(pattern: AccessPattern) -> tuple[str, ...]:
    query = pattern.operation is Operation.QUERY
    return (
        pattern.id,
        pattern.name,
        pattern.operation.value,
        pattern.index.value,
        pattern.partition_key.source,
        pattern.sort_key.describe(),
        pattern.direction.value if query else _NOT_PAGED,
        "strong" if pattern.consistent else "eventual",
        str(pattern.max_page) if query else _NOT_PAGED,
        pattern.entity,
        rule_of(pattern).value,
    )


def _ratio(pattern: AccessPattern, ratios: Mapping[str, float]) -> str:
    ratio = ratios.get(pattern.id)
    return _NOT_PAGED if ratio is None else f"{ratio:.1%}"


def render_text(
    patterns: Iterable[AccessPattern],
    fields: Sequence[FieldRow] = (),
    hit_ratios: Mapping[str, float] | None = None,
) -> str:
    """``hit_ratios``: each pattern's share of reads the cache served, from
    a scrape of a running gateway; a column of its own when given."""
    if hit_ratios is None:
        table = [COLUMNS, *(_row(p) for p in patterns)]
    else:
        table = [(*COLUMNS, HIT_RATIO), *((*_row(p), _ratio(p, hit_ratios)) for p in patterns)]
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in table
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    text = "\n".join(lines) + "\n"
    return f"{text}\n{render_field_text(fields)}" if fields else text


def render_markdown(patterns: Iterable[AccessPattern], fields: Sequence[FieldRow] = ()) -> str:
    lines = [
        _PREAMBLE,
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "|".join(" --- " for _ in COLUMNS) + "|",
    ]
    for pattern in patterns:
        cells = [cell.replace("|", "\\|") for cell in _row(pattern)]
        cells[4] = _code(pattern.partition_key.source)
        cells[5] = _sort_markdown(pattern.sort_key)
        lines.append("| " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    return f"{text}\n{render_field_markdown(fields)}" if fields else text


def _sort_markdown(condition: SortCondition) -> str:
    template = _code(condition.template.source)
    if condition.upper is not None:
        return f"between {template} and {_code(condition.upper.source)}"
    if condition.operator is SortOperator.EQ:
        return template
    return f"{condition.operator.value} {template}"


def _code(text: str) -> str:
    return "`" + text.replace("|", "\\|") + "`"
