"""A request's read budget: the items and capacity units its reads may use.

The cost model plans an operation's reads before it runs (docs/design.md,
Limits and cost); this is the bound at run time, for whatever the plan could
not see: each read is refused once the request has used its budget, and a
read that takes it over stops the request. A ContextVar, like the trace, so
resolvers, commands and DataLoaders carry no plumbing; work outside a request
(the relay, the tailer, reconcile) runs without one.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass

from domain.errors import ReadBudgetExceeded
from storage.trace import ContextValue

__all__ = [
    "READ_BUDGET",
    "ReadBudget",
    "before_read",
    "current_budget",
    "reading_within",
    "spend_read",
]

_HINT = "Ask for smaller pages (first) or fewer nested connections, or split the operation."


@dataclass
class ReadBudget:
    max_items: int
    max_units: float
    items: int = 0
    units: float = 0.0

    def check(self) -> None:
        if self.items >= self.max_items or self.units >= self.max_units:
            raise ReadBudgetExceeded(
                f"The operation read {self.items} items ({self.units:g} capacity units), "
                f"the most one request may read is {self.max_items} items and "
                f"{self.max_units:g} units",
                hint=_HINT,
                readItems=self.items,
                maxReadItems=self.max_items,
                readUnits=self.units,
                maxReadUnits=self.max_units,
            )

    def spend(self, items: int, units: float) -> None:
        self.items += items
        self.units += units
        if self.items > self.max_items or self.units > self.max_units:
            self.check()


_current: ContextVar[ReadBudget | None] = ContextVar("proofgate_read_budget", default=None)
READ_BUDGET = _current
"""What ``reading_within`` sets, for a hot path to set and reset itself."""


def before_read() -> None:
    """Refuses a read, before any I/O, once the budget is used up."""
    budget = _current.get()
    if budget is not None:
        budget.check()


def spend_read(items: int, units: float) -> None:
    budget = _current.get()
    if budget is not None:
        budget.spend(items, units)


def current_budget() -> ReadBudget | None:
    """The budget reads in this context spend, for work that runs later
    (a deferred fragment) to read within it too."""
    return _current.get()


def reading_within(budget: ReadBudget) -> ContextValue[ReadBudget]:
    return ContextValue(_current, budget)
