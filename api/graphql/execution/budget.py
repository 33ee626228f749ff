"""The response byte budget, counted while the response is built.

A small request can name one large value many times (aliases, pages of
nested lists), and the values cost nothing to hold, since the data tree keeps
references to strings already read; the bytes appear only when the result is
encoded. So both executors count, as they complete the data, what the JSON
encoding will take: every response key and every leaf value as orjson writes
it (a control character is six bytes, a non-ASCII character its UTF-8 bytes).
Past the budget the operation stops with QUERY_TOO_COMPLEX and ``data`` null,
before any of it is encoded (docs/design.md, Response budget).
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from domain.errors import BudgetExceeded, ResponseTooLarge

__all__ = ["ResponseBytes", "ends_operation", "key_bytes", "leaf_bytes"]

_HINT = "Select fewer fields, fewer aliases or smaller pages (first), or split the operation."


def key_bytes(response_name: str) -> int:
    """``"name":`` and the comma before the next member."""
    return len(response_name.encode()) + 4


def leaf_bytes(value: Any) -> int:
    if type(value) is str and value.isascii() and value.isprintable() and '"' not in value:
        # The common case, exactly, without encoding: printable ASCII escapes only
        # the backslash, counted here too.
        return len(value) + 2 + value.count("\\")
    try:
        return len(orjson.dumps(value))
    except (orjson.JSONEncodeError, TypeError):
        pass
    try:
        return len(json.dumps(value, separators=(",", ":")).encode())
    except (TypeError, ValueError):
        return len(str(value).encode()) + 2


class ResponseBytes:
    """What one result's data will take as JSON; one per execution (and per
    subscription event)."""

    __slots__ = ("limit", "used")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0

    def charge(self, size: int) -> None:
        self.used += size
        if self.used > self.limit:
            raise self.exceeded()

    def exceeded(self) -> ResponseTooLarge:
        """The error for a response past the budget, for a caller that counted
        inline and handles the error as the field's own."""
        return ResponseTooLarge(
            f"The response would take more than {self.limit} bytes",
            hint=_HINT,
            maxResponseBytes=self.limit,
        )


def ends_operation(error: BaseException) -> bool:
    """Whether a field's error is a budget of the whole operation running out,
    which nulls the whole result rather than the field."""
    while error is not None:
        if isinstance(error, BudgetExceeded):
            return True
        error = getattr(error, "original_error", None)  # type: ignore[assignment]
    return False
