"""The read budget at the storage adapter: reads refused before their I/O
once it is used, the read that goes over it stopped, no budget outside a
request."""

from __future__ import annotations

import pytest

from domain.errors import ReadBudgetExceeded
from storage.budget import (
    ReadBudget,
    before_read,
    current_budget,
    reading_within,
    spend_read,
)


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


def test_a_budget_counts_only_the_reads_within_it() -> None:
    """Reads outside a request (the relay, start-up, the CLI) spend no budget,
    nor the one a request left behind when it ended."""
    with reading_within(ReadBudget(max_items=10, max_units=10)) as budget:
        spend_read(4, 2)
    assert current_budget() is None
    before_read()
    spend_read(10**9, 10**9)
    assert (budget.items, budget.units) == (4, 2)
    with reading_within(budget), pytest.raises(ReadBudgetExceeded):
        spend_read(7, 0)  # the positive control: the same budget, read within it, is spent
