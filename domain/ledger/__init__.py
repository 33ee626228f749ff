"""The credits ledger: exact amounts, balanced transactions, balance deltas."""

from __future__ import annotations

from .accounts import (
    PLATFORM_ACCOUNTS,
    PLATFORM_GRANTS,
    PLATFORM_REVENUE,
    Account,
    brand_account,
    parse_account,
)
from .amounts import (
    AMOUNT_MAX_INTEGER_DIGITS,
    CREDIT,
    CURRENCY_SCALES,
    check_amount,
    currency_scale,
    format_amount,
    parse_amount,
    require_positive,
)
from .balances import Balance, BalanceDelta, release_delta, reservation_delta, transaction_deltas
from .charges import (
    FREE_PLAN_GRANT,
    REGISTRATION_FEE_DEFAULT,
    free_plan_grant_lines,
    grant_lines,
    registration_fee_lines,
)
from .transactions import (
    LEDGER_LINES_MAX,
    LEDGER_MEMO_MAX_CHARS,
    TRANSACTION_ID_PREFIX,
    LedgerLine,
    LedgerTransaction,
    build_transaction,
    can_reverse,
    check_balanced,
    check_reversible,
    reversal_id,
    reversal_of,
    transaction_id,
)

__all__ = [
    "AMOUNT_MAX_INTEGER_DIGITS",
    "CREDIT",
    "CURRENCY_SCALES",
    "FREE_PLAN_GRANT",
    "LEDGER_LINES_MAX",
    "LEDGER_MEMO_MAX_CHARS",
    "PLATFORM_ACCOUNTS",
    "PLATFORM_GRANTS",
    "PLATFORM_REVENUE",
    "REGISTRATION_FEE_DEFAULT",
    "TRANSACTION_ID_PREFIX",
    "Account",
    "Balance",
    "BalanceDelta",
    "LedgerLine",
    "LedgerTransaction",
    "brand_account",
    "build_transaction",
    "can_reverse",
    "check_amount",
    "check_balanced",
    "check_reversible",
    "currency_scale",
    "format_amount",
    "free_plan_grant_lines",
    "grant_lines",
    "parse_account",
    "parse_amount",
    "registration_fee_lines",
    "release_delta",
    "require_positive",
    "reservation_delta",
    "reversal_id",
    "reversal_of",
    "transaction_deltas",
    "transaction_id",
]
