"""``extensions.cost`` on every query and mutation: what the operation
planned to read, what it did read and write, and what is left of the budget,
named after Shopify's (docs/design.md, Costs on every response).

The actual side is the operation's share of the request's storage account
(``storage.trace.accounting``), which the request log keeps anyway: the calls
made since the operation started, summed once when the answer is built, so a
request pays a list slice and a loop over its few storage calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from resolvers.context import RequestContext
from services.auth import Role
from storage.trace import ContextValue, StorageCall, Trace, accounting, current_account

__all__ = ["WRITE_OPERATIONS", "ActualCost", "cost_extension", "shows_reads"]

WRITE_OPERATIONS = frozenset(
    {"PutItem", "UpdateItem", "DeleteItem", "ConditionCheckItem", "TransactWriteItems"}
)
"""The storage calls that write (``storage/store.py`` names a single write
after its action); every other call reads."""


class ActualCost:
    """The storage calls made inside a ``with`` block: counted in the
    request's account when there is one, else in an account of its own
    (an operation outside an HTTP request, such as one over a WebSocket)."""

    __slots__ = ("_account", "_own", "_start")

    def __enter__(self) -> ActualCost:
        account = current_account()
        self._own: ContextValue[Trace] | None = None
        if account is None:
            account = Trace()
            self._own = accounting(account)
            self._own.__enter__()
        self._account = account
        self._start = len(account.calls)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._own is not None:
            self._own.__exit__(*exc)

    def calls(self) -> Sequence[StorageCall]:
        return self._account.calls[self._start :]


def shows_reads(context: object) -> bool:
    """Whether the caller may see what was read: only with a key, as for the
    trace, since how many items an operation found can tell an anonymous
    caller that something it may not see exists."""
    # ``request_context``'s test, inline: the prepared lane asks per request.
    return isinstance(context, RequestContext) and context.principal.role is not Role.ANONYMOUS


def cost_extension(
    requested: int | None, max_cost: int, calls: Sequence[StorageCall] | None
) -> dict[str, Any]:
    """``requestedQueryCost`` is the planned cost (items, ``api/limits/cost.py``),
    None when the operation could not be costed (it did not run);
    ``actualQueryCost`` None when ``calls`` is (``shows_reads``);
    ``throttleStatus`` is the per-operation budget and what the plan left of it."""
    return {
        "requestedQueryCost": requested,
        "actualQueryCost": None if calls is None else _actual(calls),
        "throttleStatus": {
            "maximumAvailable": max_cost,
            "currentlyAvailable": max(max_cost - (requested or 0), 0),
        },
    }


def _actual(calls: Sequence[StorageCall]) -> dict[str, Any]:
    read_items = storage_calls = 0
    read_units = write_units = 0.0
    for call in calls:
        storage_calls += 1
        if call.operation in WRITE_OPERATIONS:
            write_units += call.capacity
        else:
            read_items += call.items
            read_units += call.capacity
    return {
        "readItems": read_items,
        "readUnits": read_units,
        "writeUnits": write_units,
        "storageCalls": storage_calls,
    }
