"""What one HTTP request did, gathered while it runs, for its log line and
the metrics: the request id, the operation, who asked, the error codes it
answered with and the storage it used.

A ContextVar, like the storage trace: the middleware opens an observation for
the request, and the parts that learn something (authentication, the error
mapper, the operation extension) add to it without being handed it.
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Iterable
from contextvars import ContextVar
from dataclasses import dataclass, field

from storage.trace import ContextValue, Trace

__all__ = [
    "OBSERVED",
    "REQUEST_ID_HEADER",
    "Observation",
    "current_observation",
    "new_request_id",
    "note_error_codes",
    "observing",
    "request_id_from",
]

REQUEST_ID_HEADER = "x-request-id"
_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
"""An incoming id is kept only when it is short and plain: it goes into log
lines verbatim, so anything that could forge a line or a field is replaced."""


@dataclass
class Observation:
    request_id: str
    operation_name: str | None = None
    operation_type: str | None = None
    principal: str | None = None
    error_codes: list[str] = field(default_factory=list)
    storage: Trace = field(default_factory=Trace)


_current: ContextVar[Observation | None] = ContextVar("proofgate_observation", default=None)
OBSERVED = _current
"""The request's observation: ``observing`` sets it for a block; the
/graphql entry's direct path sets and resets it itself, without the
context manager's object and two calls (docs/design.md, The /graphql entry)."""


def request_id_from(incoming: str | None) -> str:
    if incoming is not None and _REQUEST_ID.fullmatch(incoming):
        return incoming
    return new_request_id()


class _RequestIds:
    """Ids unique within the process and, with a random prefix per process,
    across processes: 16 hex digits, as ``secrets.token_hex(8)`` wrote them,
    without a system call each. An id only correlates a response with its log
    lines (a client may send its own), so nothing relies on guessing it being
    hard. The prefix is drawn again in a forked child (``serve --workers``)
    and when the counter wraps."""

    def __init__(self) -> None:
        self._prefix = ""
        self._next = _WRAP

    def __call__(self) -> str:
        count = self._next
        if count >= _WRAP:
            self._prefix = secrets.token_hex(4)
            count = 0
        self._next = count + 1
        # ``{count:08x}`` without its format spec parsed per id: the hex
        # digits of ``count`` above a 1 at bit 32, which ``0x1`` leads.
        return self._prefix + hex(count | _WRAP)[3:]

    def forked(self) -> None:
        self._next = _WRAP


_WRAP = 1 << 32
new_request_id = _RequestIds()
os.register_at_fork(after_in_child=new_request_id.forked)
"""A new request id (``_RequestIds``)."""


def current_observation() -> Observation | None:
    return _current.get()


def note_error_codes(codes: Iterable[str]) -> None:
    observation = _current.get()
    if observation is not None:
        observation.error_codes.extend(codes)


def observing(observation: Observation) -> ContextValue[Observation]:
    return ContextValue(_current, observation)
