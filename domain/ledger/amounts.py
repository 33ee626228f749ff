"""Exact amounts: Decimal at a fixed per-currency scale, never float.

A float cannot hold 0.10 exactly, so floats are refused at the door rather
than rounded. Text is accepted only in plain decimal notation with ASCII
digits, the way the API writes amounts: ``Decimal()`` alone would also take
"NaN", "Infinity", "1_000", "1e-2", "+5" and non-ASCII digits, and an exponent
lets a short string name a huge number. A value with more decimals than its
currency's scale is refused unless the extra digits are zeros ("1.000" is
1.00): the value is what must be exact, not its spelling.

Amounts and brand balances both stay below 10**15 (999999999999999.99
CREDIT): 17 significant digits, so a sum of the lines of a whole statement
stays exact in the 25-digit context below and far inside DynamoDB's 38-digit
numbers, and a balance the ledger wrote is always one it can read back.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Context, Decimal, InvalidOperation

from domain.errors import BadUserInput

__all__ = [
    "AMOUNT_MAX_INTEGER_DIGITS",
    "AMOUNT_NOTATION_HINT",
    "CREDIT",
    "CURRENCY_SCALES",
    "amount_max",
    "check_amount",
    "currency_scale",
    "format_amount",
    "parse_amount",
    "require_positive",
]

CREDIT = "CREDIT"
CURRENCY_SCALES: Mapping[str, int] = {CREDIT: 2}

AMOUNT_MAX_INTEGER_DIGITS = 15
"""|amount| < 10**15 and |balance| < 10**15: see the module's docstring."""

AMOUNT_NOTATION_HINT = (
    'Send amounts as plain decimal strings, e.g. "1.50" or "-2": no exponent, no leading "+".'
)
_MAX_TEXT_CHARS = 64
_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
_CONTEXT = Context(prec=AMOUNT_MAX_INTEGER_DIGITS + 10, traps=[InvalidOperation])
_HINT = AMOUNT_NOTATION_HINT


def currency_scale(currency: str) -> int:
    try:
        return CURRENCY_SCALES[currency]
    except (KeyError, TypeError):
        known = ", ".join(sorted(CURRENCY_SCALES))
        raise BadUserInput(f"Unknown currency {currency!r}", hint=f"Use one of: {known}.") from None


def _quantum(scale: int) -> Decimal:
    return Decimal(1).scaleb(-scale)


def amount_max(currency: str) -> Decimal:
    """The largest amount, and the largest balance, in ``currency``."""
    return Decimal(10) ** AMOUNT_MAX_INTEGER_DIGITS - _quantum(currency_scale(currency))


def check_amount(amount: Decimal, currency: str) -> Decimal:
    """Validate an amount that is already a Decimal and return it at the
    currency's scale (``Decimal("1")`` -> ``Decimal("1.00")``)."""
    if isinstance(amount, bool) or not isinstance(amount, Decimal):
        raise BadUserInput(f"Amount must be a decimal, not {type(amount).__name__}", hint=_HINT)
    scale = currency_scale(currency)
    if not amount.is_finite():
        raise BadUserInput(f"Amount {amount} is not a finite number", hint=_HINT)
    if not amount.is_zero() and amount.adjusted() >= AMOUNT_MAX_INTEGER_DIGITS:
        raise BadUserInput(
            f"Amount is out of range: at most {format_amount(amount_max(currency), currency)} "
            f"{currency} either way",
            hint="Split it into several transactions, each within the range.",
        )
    quantized = amount.quantize(_quantum(scale), context=_CONTEXT)
    if quantized != amount:
        raise BadUserInput(
            f"{currency} amounts have at most {scale} decimal places",
            hint=f"Round to {scale} places, e.g. {format_amount(quantized, currency)}.",
        )
    if quantized.is_zero():
        return quantized.copy_abs()
    return quantized


def parse_amount(value: str | Decimal | int, currency: str) -> Decimal:
    if isinstance(value, (bool, float)):
        raise BadUserInput(f"Amount must not be a {type(value).__name__}", hint=_HINT)
    if isinstance(value, int):
        return check_amount(Decimal(value), currency)
    if isinstance(value, str):
        if len(value) > _MAX_TEXT_CHARS or not _NUMBER.fullmatch(value):
            raise BadUserInput(f"{value[:_MAX_TEXT_CHARS]!r} is not a decimal amount", hint=_HINT)
        try:
            number = Decimal(value)
        except InvalidOperation:
            raise BadUserInput(f"Amount {value!r} is out of range", hint=_HINT) from None
        return check_amount(number, currency)
    return check_amount(value, currency)


def require_positive(amount: Decimal, *, field: str = "amount") -> Decimal:
    if amount <= 0:
        raise BadUserInput(f"{field} must be greater than zero")
    return amount


def format_amount(amount: Decimal, currency: str) -> str:
    """The API's spelling: plain notation at the currency's scale ("0.10")."""
    return format(amount.quantize(_quantum(currency_scale(currency)), context=_CONTEXT), "f")
