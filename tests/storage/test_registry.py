from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.errors import AccessPatternError, BadUserInput
from storage.keys import Key, KeyTemplate
from storage.limits import PAGE_SIZE_MAX
from storage.registry import (
    AccessPattern,
    Direction,
    Operation,
    Registry,
    SortCondition,
    SortOperator,
    SortRange,
)
from storage.table import TABLE, IndexDefinition, IndexName, TableDefinition


def pattern(
    ap_id: str = "T01",
    *,
    operation: Operation = Operation.QUERY,
    index: IndexName = IndexName.TABLE,
    partition_key: str = "THING#{thing_id}",
    sort_key: SortCondition | None = None,
    **options: Any,
) -> AccessPattern:
    return AccessPattern(
        ap_id,
        "test pattern",
        operation,
        index,
        KeyTemplate(partition_key),
        sort_key or SortCondition("begins_with", "PART#"),
        "Thing",
        **options,
    )


def test_registers_and_looks_up_by_id() -> None:
    registry = Registry()
    ap = registry.register(pattern())
    assert registry["T01"] is ap
    assert ap in registry
    assert len(registry) == 1
    assert list(registry) == [ap]


def test_iterates_in_id_order() -> None:
    registry = Registry()
    for ap_id in ("T03", "T01", "T02"):
        registry.register(pattern(ap_id))
    assert [ap.id for ap in registry] == ["T01", "T02", "T03"]


def test_duplicate_id_is_refused() -> None:
    registry = Registry()
    registry.register(pattern("T01"))
    with pytest.raises(AccessPatternError, match="twice"):
        registry.register(pattern("T01", partition_key="OTHER#{x}"))
    assert len(registry) == 1


def test_unregistered_lookup_fails() -> None:
    with pytest.raises(AccessPatternError, match="not registered"):
        Registry()["AP99"]


def test_an_equal_but_unregistered_pattern_is_not_in_the_registry() -> None:
    registry = Registry()
    registry.register(pattern("T01"))
    impostor = pattern("T01")
    assert impostor not in registry
    with pytest.raises(AccessPatternError, match="not registered"):
        registry.require(impostor, Operation.QUERY)


def test_require_checks_the_operation() -> None:
    registry = Registry()
    query = registry.register(pattern("T01"))
    get = registry.register(
        pattern("T02", operation=Operation.GET, sort_key=SortCondition("=", "META"))
    )
    batch = registry.register(
        pattern("T03", operation=Operation.BATCH_GET, sort_key=SortCondition("=", "META"))
    )
    assert registry.require(query, Operation.QUERY) is query
    assert registry.require(get, Operation.BATCH_GET) is get
    assert registry.require(batch, Operation.GET) is batch
    with pytest.raises(AccessPatternError):
        registry.require(query, Operation.GET)
    with pytest.raises(AccessPatternError):
        registry.require(get, Operation.QUERY)


def test_placeholder_naming_no_parameter_fails_at_definition() -> None:
    with pytest.raises(AccessPatternError, match="names no parameter"):
        pattern(partition_key="THING#{}")
    with pytest.raises(AccessPatternError, match="names no parameter"):
        SortCondition("=", "PART#{:int}")


def test_strongly_consistent_read_on_a_gsi_is_refused() -> None:
    with pytest.raises(AccessPatternError, match="consistent"):
        Registry().register(pattern(index=IndexName.GSI1, consistent=True))


def test_consistent_read_on_the_table_is_allowed() -> None:
    Registry().register(pattern(consistent=True))


def test_index_the_table_does_not_define_is_refused() -> None:
    no_gsi2 = TableDefinition(
        name="t",
        primary=IndexDefinition(IndexName.TABLE, "PK", "SK"),
        global_secondary=(IndexDefinition(IndexName.GSI1, "GSI1PK", "GSI1SK"),),
        ttl_attribute="expiresAt",
        stream_view="NEW_IMAGE",
    )
    registry = Registry()
    registry.register(pattern("T01", index=IndexName.GSI1, table=no_gsi2))
    with pytest.raises(AccessPatternError, match="GSI2"):
        registry.register(pattern("T02", index=IndexName.GSI2, table=no_gsi2))


@pytest.mark.parametrize("operation", [Operation.GET, Operation.BATCH_GET])
@pytest.mark.parametrize("operator", ["begins_with", "<", "<=", ">", ">="])
def test_get_needs_an_exact_sort_key(operation: Operation, operator: str) -> None:
    with pytest.raises(AccessPatternError, match="exact sort key"):
        Registry().register(pattern(operation=operation, sort_key=SortCondition(operator, "META")))


def test_get_with_between_needs_an_exact_sort_key() -> None:
    with pytest.raises(AccessPatternError, match="exact sort key"):
        Registry().register(
            pattern(operation=Operation.GET, sort_key=SortCondition("between", "A#{a}", "B#{b}"))
        )


def test_get_on_an_index_is_refused() -> None:
    with pytest.raises(AccessPatternError, match="reads the table"):
        Registry().register(
            pattern(operation=Operation.GET, index=IndexName.GSI1, sort_key=SortCondition("=", "X"))
        )


def test_between_needs_an_upper_template_and_only_between_takes_one() -> None:
    with pytest.raises(AccessPatternError):
        SortCondition("between", "SCAN#{start:time}")
    with pytest.raises(AccessPatternError):
        SortCondition("begins_with", "SCAN#", "SCAN#~")


def test_unknown_sort_operator_is_refused() -> None:
    with pytest.raises(ValueError):
        SortCondition("contains", "X")


@pytest.mark.parametrize(
    ("default_page", "max_page"),
    [(0, 10), (11, 10), (20, PAGE_SIZE_MAX + 1), (-1, 5), (5, 0)],
)
def test_page_sizes_out_of_range_are_refused(default_page: int, max_page: int) -> None:
    with pytest.raises(AccessPatternError, match="page sizes"):
        Registry().register(pattern(default_page=default_page, max_page=max_page))


def test_page_size_bounds_are_inclusive() -> None:
    Registry().register(pattern(default_page=1, max_page=1))
    Registry().register(pattern(default_page=PAGE_SIZE_MAX, max_page=PAGE_SIZE_MAX))


# --- parameters ---------------------------------------------------------------

SCANS = pattern(
    "T10",
    sort_key=SortCondition("between", "SCAN#{start:time}", "SCAN#{end:time}"),
    direction=Direction.BACKWARD,
)
DAY = datetime(2024, 5, 1, tzinfo=UTC)
LATER = datetime(2024, 5, 2, tzinfo=UTC)


def test_params_are_collected_once_in_order() -> None:
    assert SCANS.params == ("thing_id", "start", "end")
    shared = pattern(sort_key=SortCondition("between", "A#{thing_id}#{x}", "A#{thing_id}#{y}"))
    assert shared.params == ("thing_id", "x", "y")


def test_missing_parameter_is_an_error_naming_it() -> None:
    with pytest.raises(AccessPatternError, match="end"):
        SCANS.sort_range({"thing_id": "p1", "start": DAY})
    with pytest.raises(AccessPatternError, match="thing_id"):
        SCANS.partition({"start": DAY, "end": LATER})


def test_unknown_parameter_is_an_error_naming_it() -> None:
    with pytest.raises(AccessPatternError, match="bogus"):
        SCANS.partition({"thing_id": "p1", "start": DAY, "end": LATER, "bogus": 1})
    get = pattern(operation=Operation.GET, sort_key=SortCondition("=", "META"))
    with pytest.raises(AccessPatternError, match="brand"):
        get.key(thing_id="t", brand="b")


def test_resolves_partition_and_between_range() -> None:
    params = {"thing_id": "p#1", "start": DAY, "end": LATER}
    assert SCANS.partition(params) == "THING#p%231"
    assert SCANS.sort_range(params) == SortRange(
        SortOperator.BETWEEN, "SCAN#2024-05-01T00:00:00.000000Z", "SCAN#2024-05-02T00:00:00.000000Z"
    )


def test_a_range_that_starts_after_it_ends_is_bad_input() -> None:
    with pytest.raises(BadUserInput):
        SCANS.sort_range({"thing_id": "p", "start": LATER, "end": DAY})
    assert SCANS.sort_range({"thing_id": "p", "start": DAY, "end": DAY}).matches(
        "SCAN#2024-05-01T00:00:00.000000Z"
    )


@pytest.mark.parametrize(
    ("operator", "template", "upper"),
    [
        ("between", "CLAIM", "META"),
        ("=", "META", None),
        ("begins_with", "EVENT#", None),
        (">", "A#b", None),
    ],
)
def test_a_constant_sort_condition_is_resolved_once_to_the_same_range(
    operator: str, template: str, upper: str | None
) -> None:
    condition = SortCondition(operator, template, upper)
    resolved = condition.resolve({})
    assert resolved == SortRange(SortOperator(operator), template, upper)
    assert condition.resolve({"any": 1}) is resolved


def test_a_constant_range_that_starts_after_it_ends_fails_at_definition() -> None:
    with pytest.raises(BadUserInput):
        SortCondition("between", "META", "CLAIM")


def test_get_key_and_query_has_no_single_key() -> None:
    get = pattern(operation=Operation.GET, sort_key=SortCondition("=", "EVENT#{n:int}"))
    assert get.key(thing_id="t1", n=3) == Key("THING#t1", "EVENT#000000000003")
    with pytest.raises(AccessPatternError, match="query"):
        SCANS.key(thing_id="t1", start=DAY, end=LATER)


def test_describe_sort_conditions() -> None:
    assert SortCondition("=", "META").describe() == "META"
    assert SortCondition("begins_with", "EVENT#").describe() == "begins_with EVENT#"
    assert SortCondition("between", "A#{a}", "B#{b}").describe() == "between A#{a} and B#{b}"
    assert SortCondition("<", "DUE#{t:time}").describe() == "< DUE#{t:time}"


def test_default_table_is_the_one_table() -> None:
    assert pattern().table is TABLE


# --- SortRange.matches --------------------------------------------------------


@pytest.mark.parametrize(
    ("operator", "value", "upper", "key", "expected"),
    [
        ("=", "EVENT#1", None, "EVENT#1", True),
        ("=", "EVENT#1", None, "EVENT#10", False),
        ("=", "event#1", None, "EVENT#1", False),
        ("begins_with", "EVENT#", None, "EVENT#", True),
        ("begins_with", "EVENT#", None, "EVENT#000001", True),
        ("begins_with", "EVENT#", None, "EVENT", False),
        ("begins_with", "EVENT#", None, "event#1", False),
        ("begins_with", "é", None, "éa", True),
        ("between", "B", "D", "A", False),
        ("between", "B", "D", "B", True),
        ("between", "B", "D", "C", True),
        ("between", "B", "D", "D", True),
        ("between", "B", "D", "Da", False),
        ("<", "M", None, "L", True),
        ("<", "M", None, "M", False),
        ("<=", "M", None, "M", True),
        ("<=", "M", None, "Ma", False),
        (">", "M", None, "M", False),
        (">", "M", None, "Ma", True),
        (">=", "M", None, "M", True),
        (">=", "M", None, "L", False),
        # UTF-8 byte order: every non-ASCII character sorts after every ASCII one.
        (">", "~", None, "é", True),
        ("<", "z", None, "é", False),
        ("between", "a", "~", "é", False),
        # U+FFFD (3 UTF-8 bytes) sorts before U+1F600 (4 bytes); UTF-16 order would disagree.
        ("<", "\U0001f600", None, "\ufffd", True),
    ],
)
def test_sort_range_matches(
    operator: str, value: str, upper: str | None, key: str, expected: bool
) -> None:
    assert SortRange(SortOperator(operator), value, upper).matches(key) is expected


@given(st.text(min_size=1), st.text(min_size=1))
def test_sort_range_order_is_utf8_byte_order(value: str, key: str) -> None:
    less = key.encode() < value.encode()
    assert SortRange(SortOperator.LT, value).matches(key) is less
    assert SortRange(SortOperator.GTE, value).matches(key) is not less
