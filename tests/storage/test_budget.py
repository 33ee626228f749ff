"""The read budget at the storage adapter: reads refused before their I/O
once it is used, the read that goes over it stopped, no budget outside a
request."""

from __future__ import annotations

import pytest

from domain.errors import ReadBudgetExceeded
from storage.budget import ReadBudget, before_read, reading_within, spend_read


def test_reads_within_the_budget_pass() -> None:
    with reading_within(ReadBudget(max_items=10, max_units=5)) as budget:
        before_read()
        spend_read(10, 5)
    assert (budget.items, budget.units) == (10, 5)


def test_the_read_that_goes_over_stops_and_the_next_is_refused_before_io() -> None:
    with reading_within(ReadBudget(max_items=10, max_units=100)) as budget:
        with pytest.raises(ReadBudgetExceeded) as over:
            spend_read(11, 1)
        assert over.value.extensions["readItems"] == 11
        assert over.value.extensions["maxReadItems"] == 10
        with pytest.raises(ReadBudgetExceeded):
            before_read()
    assert budget.items == 11


def test_capacity_units_count_too() -> None:
    with (
        reading_within(ReadBudget(max_items=100, max_units=2)),
        pytest.raises(ReadBudgetExceeded) as over,
    ):
        spend_read(1, 2.5)
    assert over.value.extensions["maxReadUnits"] == 2


def test_without_a_budget_nothing_is_counted() -> None:
    before_read()
    spend_read(10**9, 10**9)
