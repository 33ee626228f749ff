"""The one error hierarchy.

Every error the gateway raises on purpose is a ``ProofgateError`` with a stable
``code`` (the GraphQL ``extensions.code``) and an optional ``hint`` that tells
the caller how to fix the request. The mapping to GraphQL happens in exactly one
place (``api.wire.errors``); everything else only raises.

Messages must never carry another tenant's keys or identifiers: storage errors
describe *which action* failed, not the raw key, unless the caller wrote it.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

__all__ = [
    "AccessPatternError",
    "BadUserInput",
    "BudgetExceeded",
    "ConditionFailed",
    "ConfigurationError",
    "Conflict",
    "ErrorCode",
    "Forbidden",
    "InsufficientCredits",
    "InvalidCursor",
    "LimitExceeded",
    "NotFound",
    "PersistedQueryNotAllowed",
    "PersistedQueryNotFound",
    "ProofgateError",
    "QueryTooComplex",
    "RateLimited",
    "ReadBudgetExceeded",
    "ResponseTooLarge",
    "ServiceUnavailable",
    "TransactionCanceled",
    "Unauthenticated",
]


class ErrorCode(StrEnum):
    UNAUTHENTICATED = "UNAUTHENTICATED"
    FORBIDDEN = "FORBIDDEN"
    NOT_FOUND = "NOT_FOUND"
    BAD_USER_INPUT = "BAD_USER_INPUT"
    CONFLICT = "CONFLICT"
    INSUFFICIENT_CREDITS = "INSUFFICIENT_CREDITS"
    RATE_LIMITED = "RATE_LIMITED"
    QUERY_TOO_COMPLEX = "QUERY_TOO_COMPLEX"
    PERSISTED_QUERY_NOT_ALLOWED = "PERSISTED_QUERY_NOT_ALLOWED"
    PERSISTED_QUERY_NOT_FOUND = "PERSISTED_QUERY_NOT_FOUND"
    SERVICE_UNAVAILABLE = "SERVICE_UNAVAILABLE"
    INTERNAL_SERVER_ERROR = "INTERNAL_SERVER_ERROR"


class ProofgateError(Exception):
    code: ErrorCode = ErrorCode.INTERNAL_SERVER_ERROR

    def __init__(self, message: str, *, hint: str | None = None, **extensions: Any) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.extensions = extensions

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"


class Unauthenticated(ProofgateError):
    code = ErrorCode.UNAUTHENTICATED


class Forbidden(ProofgateError):
    code = ErrorCode.FORBIDDEN


class NotFound(ProofgateError):
    code = ErrorCode.NOT_FOUND


class BadUserInput(ProofgateError):
    code = ErrorCode.BAD_USER_INPUT


class Conflict(ProofgateError):
    code = ErrorCode.CONFLICT


class InsufficientCredits(ProofgateError):
    code = ErrorCode.INSUFFICIENT_CREDITS


class RateLimited(ProofgateError):
    code = ErrorCode.RATE_LIMITED


class QueryTooComplex(ProofgateError):
    code = ErrorCode.QUERY_TOO_COMPLEX


class BudgetExceeded(QueryTooComplex):
    """A run-time budget of the whole operation ran out: unlike a field's
    error, it ends the operation (``data`` null), since every field after it
    would fail the same way."""


class ReadBudgetExceeded(BudgetExceeded):
    """The request read more items or capacity units than one request may."""


class ResponseTooLarge(BudgetExceeded):
    """The response would encode to more bytes than one response may hold."""


class PersistedQueryNotAllowed(ProofgateError):
    """Trusted-documents mode: the document is not one the operator registered."""

    code = ErrorCode.PERSISTED_QUERY_NOT_ALLOWED


class PersistedQueryNotFound(BadUserInput):
    """A document id or hash sent without its text, that nothing registered:
    the code Apollo's and Relay's clients look for."""

    code = ErrorCode.PERSISTED_QUERY_NOT_FOUND


class ServiceUnavailable(ProofgateError):
    """Retryable: the store throttled or could not finish the request in time."""

    code = ErrorCode.SERVICE_UNAVAILABLE


class ConfigurationError(ProofgateError):
    """A setting is missing or malformed; raised at start-up, never per request."""

    code = ErrorCode.INTERNAL_SERVER_ERROR


# --- storage ----------------------------------------------------------------


class AccessPatternError(ProofgateError):
    """A programming error: unregistered AP, missing key parameter, bad template.

    Raised before any I/O, so it never reaches storage; it maps to an internal
    error because no client input can cause it.
    """

    code = ErrorCode.INTERNAL_SERVER_ERROR


class InvalidCursor(BadUserInput):
    def __init__(self, message: str = "Invalid or expired cursor") -> None:
        super().__init__(message, hint="Use the endCursor returned by the same field, unchanged.")


class LimitExceeded(BadUserInput):
    """A DynamoDB limit (item size, key length, batch or transaction size)."""


class ConditionFailed(Conflict):
    """A write's condition did not hold.

    ``index`` is the position of the failing action in the caller's list, so the
    caller, who built the actions, knows which item it was. Callers map it to
    what it means; one that reaches a client as is says so in a client's words
    (``detail`` keeps the store's): a write retried after a storage error may
    have found its own first attempt (docs/design.md, Storage).
    """

    def __init__(self, message: str, *, index: int = 0, key: tuple[str, str] | None = None) -> None:
        super().__init__(
            "The data changed while this request ran: another request, or this request's "
            "own first attempt if the store failed and it was retried, wrote it first",
            hint="Read the data again; if you retried this request, check whether it applied.",
        )
        self.detail = message
        self.index = index
        self.key = key


class TransactionCanceled(Conflict):
    """A transaction was cancelled for a reason other than a failed condition
    (a concurrent transaction touched the same items). Safe to retry."""

    def __init__(self, message: str, *, reasons: list[str | None] | None = None) -> None:
        super().__init__(message)
        self.reasons = reasons or []
