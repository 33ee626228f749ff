"""Per-request storage accounting, for ``X-Proofgate-Trace: 1``.

A ContextVar rather than a parameter, so resolvers and DataLoaders stay free of
plumbing; the API layer opens a trace for a request and reads it afterwards.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Generic, NamedTuple, TypeVar

__all__ = [
    "ACCOUNTS",
    "ContextValue",
    "StorageCall",
    "Trace",
    "accounting",
    "current_account",
    "record",
    "tracing",
]


class StorageCall(NamedTuple):
    """A tuple: one is made for every storage call a request makes."""

    operation: str
    access_pattern: str | None
    items: int
    capacity: float


@dataclass
class Trace:
    calls: list[StorageCall] = field(default_factory=list)

    @property
    def storage_calls(self) -> int:
        return len(self.calls)

    @property
    def items(self) -> int:
        return sum(c.items for c in self.calls)

    @property
    def capacity(self) -> float:
        return sum(c.capacity for c in self.calls)

    @property
    def access_patterns(self) -> list[str]:
        seen: dict[str, None] = {}
        for call in self.calls:
            if call.access_pattern:
                seen.setdefault(call.access_pattern)
        return list(seen)


V = TypeVar("V")

_current: ContextVar[Trace | None] = ContextVar("proofgate_storage_trace", default=None)
_accounts: ContextVar[Trace | None] = ContextVar("proofgate_storage_accounts", default=None)
ACCOUNTS = _accounts
"""What ``accounting`` sets, for a hot path to set and reset itself."""
"""The request's own account, kept for metrics and the request log whether or
not the client asked for a trace; ``_current`` is what the client sees."""


def record(operation: str, access_pattern: str | None, items: int, capacity: float) -> None:
    trace, account = _current.get(), _accounts.get()
    if trace is None and account is None:
        return
    call = StorageCall(operation, access_pattern, items, capacity)
    if trace is not None:
        trace.calls.append(call)
    if account is not None:
        account.calls.append(call)


@contextmanager
def tracing(trace: Trace | None = None) -> Iterator[Trace]:
    trace = trace if trace is not None else Trace()
    token = _current.set(trace)
    try:
        yield trace
    finally:
        _current.reset(token)


class ContextValue(Generic[V]):
    """``var`` set to ``value`` for a ``with`` block, as a ``@contextmanager``
    setting and resetting it would, without a generator to make and step: a
    request enters several of these, and each generator cost a microsecond."""

    __slots__ = ("_token", "_value", "_var")

    def __init__(self, var: ContextVar[Any], value: V) -> None:
        self._var = var
        self._value = value

    def __enter__(self) -> V:
        self._token = self._var.set(self._value)
        return self._value

    def __exit__(self, *exc: object) -> None:
        self._var.reset(self._token)


def accounting(account: Trace) -> ContextValue[Trace]:
    return ContextValue(_accounts, account)


def current_account() -> Trace | None:
    """The request's account, for what reports one operation's share of it
    (``extensions.cost``); None outside a request."""
    return _accounts.get()
