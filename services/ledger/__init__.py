"""The credits ledger: what other commands add to their transactions.

Registration commands include ``fee_actions`` / ``charge_actions`` (or a
``FeeReservation``'s ``settle_actions``) and ``grant_actions`` in their own
TransactWriteItems and ask ``ledger_failure`` what a failed condition meant.
The GraphQL surface lives in ``resolvers.ledger``; the commands behind it in
``commands``.
"""

from .fees import (
    FEE_ACTIONS,
    charge_actions,
    fee_actions,
    grant_actions,
    ledger_failure,
)
from .reservations import RESERVATION_TTL, FeeReservation, release_expired

__all__ = [
    "FEE_ACTIONS",
    "RESERVATION_TTL",
    "FeeReservation",
    "charge_actions",
    "fee_actions",
    "grant_actions",
    "ledger_failure",
    "release_expired",
]
