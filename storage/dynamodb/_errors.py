"""DynamoDB service errors mapped onto ``domain.errors``.

Only the codes the gateway can act on get their own mapping; anything else is a
programming or configuration error and surfaces as an internal error that names
the operation and code (never a key or a value).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from botocore.exceptions import ClientError  # type: ignore[import-untyped, unused-ignore]

from domain.errors import (
    ConditionFailed,
    LimitExceeded,
    ProofgateError,
    ServiceUnavailable,
    TransactionCanceled,
)

from ..keys import Key
from ..writes import WriteAction

__all__ = [
    "SERVER_ERROR_CODES",
    "THROTTLING_CODES",
    "cancellation_reasons",
    "error_code",
    "is_server_error",
    "is_throttled",
    "transaction_error",
    "translate",
]

# Refused before anything was applied: always safe to send again.
THROTTLING_CODES = frozenset(
    {"ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"}
)
# Failed on the server after the request arrived: a write may have applied.
SERVER_ERROR_CODES = frozenset({"InternalServerError", "ServiceUnavailable"})
# Cancellation reasons use their own, shorter spellings.
_THROTTLED_REASONS = frozenset(
    {"ProvisionedThroughputExceeded", "ThrottlingError", "RequestLimitExceeded"}
)

# ValidationException messages that report a DynamoDB limit rather than a bug.
_LIMIT_MESSAGE = re.compile(
    r"size|exceed|too many|too long|length|38 significant|magnitude|multiple operations on one item"
    r"|empty string|incorrect data type",
    re.IGNORECASE,
)
_REASONS_IN_MESSAGE = re.compile(r"\[([^\]]*)\]\s*$")

_TABLE_HINT = "Create the table with `proofgate create-table`, or check the table name and region."


def error_code(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))


def _message(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Message", ""))


def cancellation_reasons(error: ClientError) -> list[str | None]:
    """One entry per action, in order; None where the action was not at fault.

    Older service responses carry the reasons only in the message text, so fall
    back to parsing "... reasons [None, ConditionalCheckFailed]".
    """
    reasons: list[dict[str, Any]] | None = error.response.get("CancellationReasons")
    if reasons is not None:
        codes = [reason.get("Code") for reason in reasons]
    else:
        match = _REASONS_IN_MESSAGE.search(_message(error))
        codes = [c.strip() for c in match.group(1).split(",")] if match else []
    return [None if code in (None, "", "None") else str(code) for code in codes]


def is_throttled(error: ClientError) -> bool:
    """Throttled requests were not applied, so sending them again is safe."""
    code = error_code(error)
    if code in THROTTLING_CODES:
        return True
    if code == "TransactionCanceledException":
        reasons = {r for r in cancellation_reasons(error) if r is not None}
        return bool(reasons) and reasons <= _THROTTLED_REASONS
    return False


def is_server_error(error: ClientError) -> bool:
    """A 5xx, whatever its body: AWS says the write may or may not have applied,
    so only a read or a transaction carrying its ``ClientRequestToken`` may be
    sent again (moto's own 500s come as HTML, coded by their status)."""
    status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    if isinstance(status, int) and status >= 500:
        return True
    code = error_code(error)
    return code in SERVER_ERROR_CODES or code.startswith("5")


def translate(error: ClientError, operation: str, *, key: Key | None = None) -> ProofgateError:
    """``key`` is the item a single write named, for ConditionFailed."""
    code = error_code(error)
    message = _message(error)
    if code == "ConditionalCheckFailedException":
        return ConditionFailed(f"The condition of {operation} did not hold", index=0, key=key)
    if code == "ValidationException" and _LIMIT_MESSAGE.search(message):
        return LimitExceeded(f"DynamoDB refused {operation}: {message}")
    if code == "ResourceNotFoundException":
        return ServiceUnavailable(
            f"DynamoDB {operation}: the table does not exist", hint=_TABLE_HINT
        )
    if code == "TransactionInProgressException":
        return ServiceUnavailable(
            f"DynamoDB {operation}: a transaction on these items is in progress"
        )
    return ProofgateError(f"DynamoDB {operation} failed with {code or type(error).__name__}")


def transaction_error(error: ClientError, actions: Sequence[WriteAction]) -> ProofgateError:
    """Map the cancellation reasons, in order, onto the caller's actions."""
    if error_code(error) != "TransactionCanceledException":
        return translate(error, "TransactWriteItems")
    reasons = cancellation_reasons(error)
    for index, reason in enumerate(reasons):
        if reason == "ConditionalCheckFailed" and index < len(actions):
            action = actions[index]
            return ConditionFailed(
                f"The condition of action {index} ({type(action).__name__}) did not hold",
                index=index,
                key=action.key,
            )
    details = _reason_messages(error)
    if "ValidationError" in reasons and _LIMIT_MESSAGE.search(details):
        return LimitExceeded(f"DynamoDB refused the transaction: {details}")
    if "TransactionConflict" in reasons:
        return TransactionCanceled(
            "A concurrent transaction touched the same items; retry", reasons=reasons
        )
    return TransactionCanceled(
        "The transaction was cancelled: " + ", ".join(r or "None" for r in reasons), reasons=reasons
    )


def _reason_messages(error: ClientError) -> str:
    reasons: list[dict[str, Any]] = error.response.get("CancellationReasons") or []
    return "; ".join(str(r["Message"]) for r in reasons if r.get("Message"))
