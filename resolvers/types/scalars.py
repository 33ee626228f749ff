"""The contract's scalars: DateTime (ISO 8601 UTC), Decimal (a string), JSON.

Resolvers use plain ``datetime`` and ``decimal.Decimal`` (the aliases below);
``SCALAR_MAP`` tells the schema how to spell them, replacing Strawberry's own
DateTime (whose ``isoformat`` drops zero microseconds and writes ``+00:00``)
with the one timestamp form that certificates hash.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal as PyDecimal
from decimal import InvalidOperation
from typing import Any, TypeAlias

import strawberry
from strawberry.scalars import JSON
from strawberry.types.scalar import ScalarDefinition

from domain.datetimes import format_datetime, parse_datetime
from domain.errors import BadUserInput
from domain.ledger import AMOUNT_NOTATION_HINT

__all__ = ["JSON", "SCALAR_MAP", "DateTime", "Decimal"]

DateTime: TypeAlias = datetime
Decimal: TypeAlias = PyDecimal


def _parse_datetime(value: Any) -> datetime:
    if not isinstance(value, str):
        raise BadUserInput("DateTime must be an ISO 8601 string")
    return parse_datetime(value)


# ASCII digits in plain notation, as the API writes decimals: Decimal() alone
# would also take "NaN", "Infinity", "1_000", " 1", "1e-2", "+5" and non-ASCII
# digits, and an exponent lets a few characters name a huge number.
_DECIMAL = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
_DECIMAL_MAX_CHARS = 64


def _parse_decimal(value: Any) -> PyDecimal:
    if not isinstance(value, str):
        raise BadUserInput(
            'Decimal amounts are strings, e.g. "1.00"', hint="Never send floats for money."
        )
    if len(value) > _DECIMAL_MAX_CHARS or not _DECIMAL.fullmatch(value):
        raise BadUserInput(
            f"Invalid decimal {value[:_DECIMAL_MAX_CHARS]!r}",
            hint=AMOUNT_NOTATION_HINT,
        )
    try:
        return PyDecimal(value)
    except InvalidOperation:
        raise BadUserInput(f"Invalid decimal {value!r}") from None


def _identity(value: Any) -> Any:
    return value


SCALAR_MAP: Mapping[object, ScalarDefinition] = {
    datetime: strawberry.scalar(
        name="DateTime",
        description="ISO 8601 timestamp in UTC, e.g. 2026-01-31T12:00:00.000000Z",
        serialize=format_datetime,
        parse_value=_parse_datetime,
    ),
    PyDecimal: strawberry.scalar(
        name="Decimal",
        description="An exact decimal number, as a string",
        serialize=str,
        parse_value=_parse_decimal,
    ),
    JSON: strawberry.scalar(
        name="JSON",
        description="Arbitrary JSON value",
        serialize=_identity,
        parse_value=_identity,
    ),
}
